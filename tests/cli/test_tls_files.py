"""``voxdesk serve --ssl-certfile/--ssl-keyfile`` with files OpenSSL cannot use: one line naming
the option, the file and what is wrong, instead of OpenSSL's "[SSL] PEM lib". Real files made by
the ``openssl`` program, loaded by Python's ssl module as the server loads them."""

from __future__ import annotations

import subprocess

import pytest

from tests.cli.test_bad_input import assert_one_clear_line
from tests.cli.test_main import voxdesk
from voxdesk.cli.arg_types import tls_problem

pytestmark = pytest.mark.integration  # runs openssl and voxdesk as processes


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A certificate with its key, another key, the pair in one file, an encrypted key, and files
    that are not PEM: text and the certificate in DER."""
    folder = tmp_path_factory.mktemp("tls")
    files = {name: folder / f"{name}.pem" for name in ("cert", "key", "other_key", "both", "encrypted", "text")}
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost")
    openssl("req", "-x509", *ec, "-keyout", str(files["key"]), "-out", str(files["cert"]))
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", str(files["other_key"]))
    openssl("pkey", "-in", str(files["key"]), "-aes256", "-passout", "pass:secret", "-out", str(files["encrypted"]))
    files["both"].write_bytes(files["cert"].read_bytes() + files["key"].read_bytes())
    files["text"].write_text("not a certificate\n")
    files["der"] = folder / "cert.der"
    openssl("x509", "-in", str(files["cert"]), "-outform", "DER", "-out", str(files["der"]))
    return {name: str(path) for name, path in files.items()}


def test_a_certfile_that_is_not_pem_is_one_line_naming_it(pem: dict[str, str]) -> None:
    result = voxdesk("serve", "--port", "0", "--ssl-certfile", pem["text"], "--ssl-keyfile", pem["key"])
    assert result.returncode == 2
    line = assert_one_clear_line(result, "argument --ssl-certfile", pem["text"], "holds no PEM certificate")
    assert "PEM lib" not in line


@pytest.mark.parametrize(
    ("cert", "key", "said"),
    [
        ("der", "key", "argument --ssl-certfile: {der}: holds no PEM certificate"),
        ("key", None, "argument --ssl-certfile: {key}: holds no PEM certificate"),
        ("cert", None, "argument --ssl-certfile: {cert}: holds a certificate but no private key: pass --ssl-keyfile"),
        ("cert", "text", "argument --ssl-keyfile: {text}: holds no PEM private key"),
        ("cert", "cert", "argument --ssl-keyfile: {cert}: holds no PEM private key"),
        ("cert", "other_key", "argument --ssl-keyfile: {other_key}: the private key is not the one of the certificate"),
        ("cert", "encrypted", "argument --ssl-keyfile: {encrypted}: the private key is encrypted"),
        (None, "key", "argument --ssl-keyfile: needs --ssl-certfile"),
    ],
)
def test_each_unusable_pair_says_which_file_and_what_is_wrong(
    pem: dict[str, str], cert: str | None, key: str | None, said: str
) -> None:
    problem = tls_problem(pem[cert] if cert else None, pem[key] if key else None)
    assert problem is not None and problem.startswith(said.format(**pem)), problem


@pytest.mark.parametrize(("cert", "key"), [("cert", "key"), ("both", None), (None, None)])
def test_usable_files_or_none_are_no_problem(pem: dict[str, str], cert: str | None, key: str | None) -> None:
    assert tls_problem(pem[cert] if cert else None, pem[key] if key else None) is None
