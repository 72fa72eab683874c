"""The noise floor: the smallest change this cluster can show, from a `calibrate` run.

Two applications of the same settings (RGW restarted, caches cold, data
placed anew) differ by far more than the seconds of one workload do: an A/A
run on a small loopback cluster once showed +24.7 % GET throughput. So a
change measured once per variant is only called significant when it is
beyond the noise inside the workloads AND beyond a floor (results.compare).

The floor of each figure comes from the last `calibrate` run of this cluster
(stored under ``calibration`` in the module's store, a few hundred bytes)
or, before one has run, is ``DEFAULT_FLOOR_PCT``. A calibrate run measures
the baseline against itself, every repeat a fresh application (interleaved);
per figure and workload the floor is the larger of

* the half-width of the 95 % interval of a change between ONE application
  and ONE other: ``z(0.975) * sqrt(2) * s_up / mean * 100``, ``s_up`` the
  90 % upper confidence bound of the pooled standard deviation of the
  repeats (that is, of the applications) of both variants (``n_a + n_b - 2``
  degrees of freedom). A handful of repeats estimates a standard deviation
  loosely: the bound makes a floor that is too low (and so more than 5 % of
  false alarms) unlikely rather than a coin toss;
* the A/A change the run itself saw;

and the figure's floor is the largest over the workloads.
"""
import json
import math
import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

from ..cluster.kvstore import Store, check_size
from ..serial import dump, load
from .model import COMPARED, Calibration, Figure, Run, WorkloadResult
from .significance import Z, mean_and_sd, sd_upper

#: the floor of every figure until this cluster is calibrated, in % (see doc/mgr/rgwbench.rst)
DEFAULT_FLOOR_PCT = 5.0
#: the built-in profile whose runs set the floor
CALIBRATE = 'calibrate'
KEY = 'calibration'
#: how sure the floor is not below the noise it stands for (module docstring)
SD_CONFIDENCE = 0.9


@dataclass(frozen=True)
class Floors:
    """The floor of each figure (by its ``change`` name) and where it comes from."""
    pct: Mapping[str, float] = field(default_factory=dict)
    #: the calibrate run they come from; None: the default
    run_id: Optional[str] = None

    def of(self, change: str) -> float:
        return float(self.pct.get(change, DEFAULT_FLOOR_PCT))


def floors_of(calibration: Calibration) -> Floors:
    return Floors(pct=dict(calibration.floors), run_id=calibration.run_id)


class CalibrationStore:
    """The last calibration of this cluster, in the module's store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self) -> Optional[Calibration]:
        raw = self.store.get_store(KEY)
        if not raw:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        return load(Calibration, data) if isinstance(data, dict) else None

    def save(self, calibration: Calibration) -> None:
        text = json.dumps(dump(calibration), sort_keys=True)
        check_size(KEY, text)
        self.store.set_store(KEY, text)

    def floors(self) -> Floors:
        """The stored floors, or the default's when the cluster was never calibrated."""
        found = self.get()
        return Floors() if found is None else floors_of(found)


def _repeat_values(entry: WorkloadResult, figure: Figure) -> List[float]:
    found = [figure.read(r.figures) for r in entry.repeats or [] if not r.error]
    return [float(v) for v in found if isinstance(v, (int, float)) and not isinstance(v, bool)]


def one_vs_one_pct(a: List[float], b: List[float]) -> Optional[float]:
    """The 95 % half-width of a change between one application and one other, in % of a's."""
    if len(a) < 2 or len(b) < 2:
        return None
    mean = statistics.fmean(a)
    if mean == 0:
        return None
    df = len(a) + len(b) - 2
    pooled = ((len(a) - 1) * mean_and_sd(a)[1] ** 2 + (len(b) - 1) * mean_and_sd(b)[1] ** 2) / df
    return Z * math.sqrt(2.0) * sd_upper(math.sqrt(pooled), df, SD_CONFIDENCE) / abs(mean) * 100.0


def calibrate(run: Run) -> Optional[Calibration]:
    """The floors an A/A run shows (module docstring); None without two variants to compare
    with two repeats or more each (a run of the profile with ``--repeats 1`` sets none)."""
    base = run.baseline_variant()
    if base is None:
        return None
    floors: Dict[str, float] = {}
    repeats = 0
    base_loads = base.usable()
    for variant in run.variants:
        if variant is base:
            continue
        for name, entry in variant.usable().items():
            if name not in base_loads:
                continue
            first = base_loads[name]
            for figure in COMPARED:
                a, b = _repeat_values(first, figure), _repeat_values(entry, figure)
                spread = one_vs_one_pct(a, b)
                if spread is None:
                    continue  # fewer than two applications a side say nothing of their noise
                repeats = max(repeats, min(len(a), len(b)))
                found = [spread]
                va, vb = figure.of(first), figure.of(entry)
                if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va:
                    found.append(abs(vb - va) / abs(va) * 100.0)
                change = str(figure.change)
                floors[change] = round(max([floors.get(change, 0.0)] + found), 2)
    if not floors:
        return None
    return Calibration(run_id=str(run.run_id), finished=run.finished, floors=floors,
                       repeats=repeats)
