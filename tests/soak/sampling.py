"""What every soak shares: a process's resources read from ``/proc``, samples over time, a least-squares
slope per hour for each measure, and bounds that a soak fails on.

A bound allows a measure to grow by ``floor`` (noise: allocator arenas, a thread pool filling up,
the shared machine's load) plus ``per_hour`` for each hour the soak ran. The growth is the fitted
line's rise over the samples after the warm-up, so one outlier does not decide it. A short run is
held mostly to its floor, a long one mostly to the slope: the bound printed is the allowed growth
over the run divided by its length, in the slope's own unit.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Bound", "Sample", "SoakResult", "Verdict", "brief", "fit_slope", "process_resources", "process_tree"]

WARM_UP_FRACTION = 0.15
"""Share of the samples (the first ones) left out of every fit: models, caches and pools fill up then."""
MIB = 1024 * 1024


def process_resources(pid: int | None = None) -> dict[str, float]:
    """Resident memory (MiB), open descriptors and threads of process ``pid`` (this one by default)
    and its descendants, summed (vLLM runs its engine core in a child process)."""
    totals = {"rss_mib": 0.0, "fds": 0.0, "threads": 0.0}
    for proc in (Path("/proc") / str(member) for member in process_tree(pid if pid is not None else os.getpid())):
        try:
            status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
            fds = len(os.listdir(proc / "fd"))
        except FileNotFoundError:  # a child that ended meanwhile
            continue
        if "VmRSS" not in status:  # a child that exited and is not reaped yet (a zombie) holds no memory
            continue
        totals["rss_mib"] += int(status["VmRSS"].split()[0]) * 1024 / MIB
        totals["fds"] += fds
        totals["threads"] += float(status["Threads"])
    return totals


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for children in (Path("/proc") / str(current)).glob("task/*/children"):
            try:
                pending.extend(int(child) for child in children.read_text().split())
            except FileNotFoundError:
                continue
    return found


def brief(values: dict[str, float]) -> str:
    """One sample's values on one line, for progress output."""
    return " ".join(f"{name}={value:.3g}" for name, value in values.items())


def fit_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The least-squares slope of ``ys`` over ``xs`` (0 for fewer than two distinct ``xs``)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


@dataclass(frozen=True)
class Sample:
    """The measures at one moment; ``hours`` is the soak's time axis (wall clock, or audio fed)."""

    hours: float
    values: dict[str, float]


@dataclass(frozen=True)
class Bound:
    """How much a measure may grow: ``floor`` plus ``per_hour`` for each hour; ``why`` says why."""

    measure: str
    unit: str
    per_hour: float
    floor: float
    why: str


@dataclass(frozen=True)
class Verdict:
    """One measure's fit against its bound, over ``span`` hours after the warm-up."""

    bound: Bound
    slope: float  # unit per hour
    span: float
    last: float

    @property
    def growth(self) -> float:
        """The fitted line's rise over the span."""
        return self.slope * self.span

    @property
    def allowed(self) -> float:
        return self.bound.floor + self.bound.per_hour * self.span

    @property
    def allowed_slope(self) -> float:
        """The bound in the slope's unit: the growth allowed over this run, per hour."""
        return self.allowed / self.span if self.span else float("inf")

    @property
    def passed(self) -> bool:
        return self.growth <= self.allowed


@dataclass
class SoakResult:
    """A soak's samples, its bounds, and checks that are not slopes (rows written, errors)."""

    name: str
    axis: str  # what an hour is here: "wall clock" or "audio fed"
    bounds: list[Bound]
    samples: list[Sample] = field(default_factory=list)
    checks: dict[str, tuple[bool, str]] = field(default_factory=dict)  # name: (passed, figures)
    started: float = field(default_factory=time.monotonic)

    def add(self, hours: float, values: dict[str, float]) -> None:
        self.samples.append(Sample(hours, dict(values)))

    def check(self, name: str, passed: bool, figures: str) -> None:
        self.checks[name] = (passed, figures)

    def verdicts(self) -> list[Verdict]:
        """Each bounded measure fitted over the samples after the warm-up (those that have it)."""
        kept = self.samples[int(len(self.samples) * WARM_UP_FRACTION) :]
        out = []
        for bound in self.bounds:
            points = [(s.hours, s.values[bound.measure]) for s in kept if bound.measure in s.values]
            xs, ys = [x for x, _ in points], [y for _, y in points]
            span = xs[-1] - xs[0] if len(xs) > 1 else 0.0
            out.append(Verdict(bound, fit_slope(xs, ys), span, ys[-1] if ys else 0.0))
        return out

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts()) and all(ok for ok, _ in self.checks.values())

    def report(self) -> str:
        """The soak's figures: one line per measure (slope, bound, pass or FAIL), then each check."""
        wall = (time.monotonic() - self.started) / 60
        hours = self.samples[-1].hours if self.samples else 0.0
        lines = [
            f"soak {self.name}: {len(self.samples)} samples, {hours * 60:.1f} min of {self.axis}, "
            f"{wall:.1f} min wall; slopes per hour of {self.axis} after a {WARM_UP_FRACTION:.0%} warm-up"
        ]
        for v in self.verdicts():
            b = v.bound
            lines.append(
                f"  {b.measure:<16} slope {v.slope:+10.3f} {b.unit}/h  bound {v.allowed_slope:10.3f} {b.unit}/h "
                f"(grew {v.growth:+.3f} {b.unit}, allowed {b.floor:g} + {b.per_hour:g}/h; last {v.last:.3f})  "
                f"{'pass' if v.passed else 'FAIL'}  [{b.why}]"
            )
        for name, (ok, figures) in self.checks.items():
            lines.append(f"  {name:<16} {figures}  {'pass' if ok else 'FAIL'}")
        lines.append(f"soak {self.name}: {'passed' if self.passed else 'FAILED'}")
        return "\n".join(lines)
