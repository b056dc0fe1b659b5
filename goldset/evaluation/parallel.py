"""Scoring a large run on several cores: forked processes each score a slice of the pairs.

Scoring is pure Python (the matcher, tokenisation, the metric functions), so threads would share one core. A
forked child inherits the pairs and samples already in memory (nothing is pickled on the way in) and sends back
only its scores, which are small; the parent scores the first slice meanwhile. ``gc.freeze()`` before the fork
keeps the children's garbage collector from touching (and so copying) every inherited object.

Fork is used only where it is the platform's own way to start processes (Linux): macOS's frameworks are not
fork-safe and Windows has no fork, and there a run is scored in one process. A child that dies or cannot be
started costs time, not results: the parent scores that slice itself. An error raised while scoring (a bad
setting) is raised in the parent as it would be in one process.
"""

from __future__ import annotations

import gc
import pickle
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from goldset.evaluation.settings import EvalSettings
    from goldset.schema import QAPair, RunSample, SampleScores

#: Fewer pairs than this per process and starting one costs more than it saves.
MIN_PER_WORKER = 1000


def available() -> bool:
    """Whether scoring may fork here (Linux, with the fork start method)."""
    import multiprocessing

    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _score_slice(pairs: list[QAPair], samples: Mapping[str, RunSample], settings: EvalSettings) -> list[SampleScores]:
    from goldset.evaluation.scoring import Scorer

    scorer = Scorer(settings)
    return [scorer.score(pair, samples.get(pair.id)) for pair in pairs]


def _child(
    conn: Connection, pairs: list[QAPair], samples: Mapping[str, RunSample], settings: EvalSettings
) -> None:
    """Runs in the forked process: score the slice, send ('ok', scores) or ('error', exception)."""
    try:
        payload: tuple[str, Any] = ("ok", _score_slice(pairs, samples, settings))
    except Exception as exc:  # raised again in the parent, as in one process
        payload = ("error", exc)
    try:
        conn.send_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # an exception that does not pickle
        conn.send_bytes(pickle.dumps(("error", RuntimeError(f"scoring failed in a worker: {exc}"))))
    finally:
        conn.close()


def score_forked(
    pairs: list[QAPair], samples: Mapping[str, RunSample], settings: EvalSettings, workers: int
) -> list[SampleScores]:
    """Score ``pairs`` in ``workers`` processes (this one included), in the pairs' order."""
    import multiprocessing

    workers = max(1, min(workers, len(pairs) // MIN_PER_WORKER))
    if workers == 1 or not available():
        return _score_slice(pairs, samples, settings)
    ctx = multiprocessing.get_context("fork")
    size = -(-len(pairs) // workers)
    slices = [pairs[i : i + size] for i in range(0, len(pairs), size)]
    children: list[tuple[Any, Connection | None, list[QAPair]]] = []
    gc.freeze()
    try:
        for part in slices[1:]:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(send, part, samples, settings), daemon=True)
            try:
                proc.start()
            except OSError:  # no memory or process slot for a child: this process scores the slice
                recv.close()
                children.append((None, None, part))
                continue
            finally:
                send.close()
            children.append((proc, recv, part))
        out = _score_slice(slices[0], samples, settings)
        for proc, conn, part in children:
            result: tuple[str, Any] | None = None
            if conn is not None:
                try:
                    result = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):  # the child died: score its slice here
                    result = None
                finally:
                    conn.close()
                    proc.join()
            if result is None:
                out += _score_slice(part, samples, settings)
            elif result[0] == "error":
                raise result[1]
            else:
                out += result[1]
        return out
    finally:
        gc.unfreeze()
        for proc, _, _ in children:
            if proc is not None and proc.is_alive():
                proc.kill()
                proc.join()
