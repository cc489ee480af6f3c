"""Argument types that refuse what the command could not use, as an argparse usage error that
names the option: numbers out of range, input files that are missing or unreadable, and TLS
files OpenSSL cannot use."""

from __future__ import annotations

import argparse
import math
import ssl
from pathlib import Path

__all__ = ["COUNT", "NON_NEGATIVE_SECONDS", "PORT", "POSITIVE_SECONDS", "Bounded", "readable_file", "tls_problem"]


class Bounded:
    """A number of ``kind`` from ``low`` to ``high`` (``None``: no bound); with ``above``, more
    than ``low`` rather than at least ``low``."""

    def __init__(
        self, kind: type[int] | type[float], low: float | None = None, high: float | None = None, above: bool = False
    ) -> None:
        self.kind = kind
        self.low = low
        self.high = high
        self.above = above
        self.__name__ = "whole number" if kind is int else "number"  # argparse names the type by it

    @property
    def range(self) -> str:
        """The values taken, in words."""
        if self.low is not None and self.high is not None:
            return f"{self.low:g}-{self.high:g}"
        if self.low is not None:
            return f"more than {self.low:g}" if self.above else f"{self.low:g} or more"
        return f"{self.high:g} or less" if self.high is not None else "any"

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {self.__name__}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        low_ok = self.low is None or (value > self.low if self.above else value >= self.low)
        if not low_ok or (self.high is not None and value > self.high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: {self.range}")
        return value


PORT = Bounded(int, 0, 65535)
"""A TCP port; 0 takes any free one."""
POSITIVE_SECONDS = Bounded(float, 0, above=True)
NON_NEGATIVE_SECONDS = Bounded(float, 0)
COUNT = Bounded(int, 1)
"""How many of something: at least one."""


def readable_file(text: str) -> str:
    """An input file that exists and can be read; its path as given."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: not a file")
    try:
        path.open("rb").close()
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{text}: cannot be read ({error.strerror})") from None
    return text


def tls_problem(certfile: str | None, keyfile: str | None) -> str | None:
    """Why ``--ssl-certfile`` and ``--ssl-keyfile`` (each a :func:`readable_file`) cannot serve
    TLS, as an argparse error naming the option and the file; ``None`` when they can.

    They are loaded as the server loads them, one step at a time, so that what OpenSSL reports
    as "PEM lib" whatever the file gets a file and a reason.
    """
    if certfile is None:
        return None if keyfile is None else "argument --ssl-keyfile: needs --ssl-certfile"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_verify_locations(cafile=certfile)
    except ssl.SSLError:
        return f"argument --ssl-certfile: {certfile}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
    asked: list[bool] = []

    def password() -> bytes:
        asked.append(True)  # only an encrypted key asks; the server would prompt on its terminal
        return b""

    key_option, key_path = ("--ssl-keyfile", keyfile) if keyfile else ("--ssl-certfile", certfile)
    try:
        context.load_cert_chain(certfile, keyfile, password=password)
    except ssl.SSLError as error:
        if asked:
            return f"argument {key_option}: {key_path}: the private key is encrypted; serve needs it unencrypted"
        if error.reason == "KEY_VALUES_MISMATCH":
            return f"argument {key_option}: {key_path}: the private key is not the one of the certificate in {certfile}"
        if keyfile is None:
            return f"argument --ssl-certfile: {certfile}: holds a certificate but no private key: pass --ssl-keyfile"
        return f"argument --ssl-keyfile: {keyfile}: holds no PEM private key (-----BEGIN PRIVATE KEY-----)"
    return None
