"""The fault build of the library (docs/faults.md), for the tests and the
many-device harness: where it is, the environment that seeds it, and the
faults a process's standard error says fired.

    env = dict(os.environ, TUREEN_LIB=FAULT_LIB, **fault_env(seed=7, rate=0.02))
    ... run the device with env, keep its stderr ...
    for point, hit, action in fired(stderr): ...
    # replay one of them alone:
    env = dict(os.environ, TUREEN_LIB=FAULT_LIB, **only(point, hit, action))
"""

from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Optional, Tuple

#: `make lib-faults` builds it; the Makefile exports its path.
FAULT_LIB = os.environ.get("TUREEN_FAULT_LIB", "")
#: The exit status of a process a fault crashed.
CRASH_STATUS = 77
#: Every line the facility writes starts with it.
PREFIX = "tureen fault: "

_LINE = re.compile(r"point=(\S+) hit=(\d+) action=(\w+)")


def fault_env(seed: int, rate: Optional[float] = None, points: Iterable[str] = (),
              actions: Iterable[str] = (), delay_ms: Optional[int] = None) -> Dict[str, str]:
    """The TUREEN_FAULT_* variables: faults decided by `seed`, at `rate`
    per hit, at `points` (names, `prefix*`, `name@hit`; none: every
    point), with `actions` (crash, error, delay; none: all)."""
    env = {"TUREEN_FAULT_SEED": str(seed)}
    if rate is not None:
        env["TUREEN_FAULT_RATE"] = repr(float(rate))
    if points:
        env["TUREEN_FAULT_POINTS"] = ",".join(points)
    if actions:
        env["TUREEN_FAULT_ACTIONS"] = ",".join(actions)
    if delay_ms is not None:
        env["TUREEN_FAULT_DELAY_MS"] = str(delay_ms)
    return env


def only(point: str, hit: int, action: str) -> Dict[str, str]:
    """The environment that does `action` at the `hit`-th hit of `point`, and nothing else."""
    return fault_env(1, rate=1, points=["%s@%d" % (point, hit)], actions=[action])


def fault_lines(stderr: str) -> List[str]:
    """The facility's lines in a process's standard error, prefix removed."""
    return [line[len(PREFIX):] for line in stderr.splitlines() if line.startswith(PREFIX)]


def fired(stderr: str) -> List[Tuple[str, int, str]]:
    """(point, hit, action) of each fault that fired, in order."""
    out = []
    for line in fault_lines(stderr):
        m = _LINE.match(line)
        if m is None:  # a refused setting: the process said why and ended
            raise ValueError(line)
        out.append((m.group(1), int(m.group(2)), m.group(3)))
    return out
