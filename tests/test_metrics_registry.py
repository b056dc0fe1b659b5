"""The metric registry: every metric documented and cited; names resolve; registration errors are loud."""

from __future__ import annotations

import numpy as np
import pytest

from goldset.evaluation.metrics import get_metric, higher_is_better, list_metrics, metric
from goldset.evaluation.metrics.registry import FAMILIES
from goldset.evaluation.metrics.system import error_rate, mean, percentile, sample_cost, tokens_per_second


def test_every_metric_has_a_description_and_a_citation() -> None:
    metrics = list_metrics()
    assert {"retrieval", "lexical", "refusal", "conciseness", "system"} <= {m.family for m in metrics} <= set(FAMILIES)
    for m in metrics:
        assert len(m.description) > 20, m.name
        assert m.citation.strip(), m.name
        assert callable(m.fn)
        if "@k" in m.name:
            assert "k" in m.params, m.name
    names = [m.name for m in metrics]
    assert len(names) == len(set(names))
    expected = {"hit@k", "recall@k", "precision@k", "mrr", "ndcg@k", "map", "context_precision", "context_recall"}
    assert expected <= {m.name for m in list_metrics("retrieval")}
    assert {"rouge_l", "token_f1", "exact_match"} <= {m.name for m in list_metrics("lexical")}


def test_names_resolve_with_and_without_cutoff() -> None:
    assert get_metric("recall@5") is get_metric("recall@k")
    assert get_metric("recall@k").output_name(k=5) == "recall@5"
    assert get_metric("mrr").output_name() == "mrr"
    assert higher_is_better("ndcg@10") is True
    assert higher_is_better("false_refusal") is False
    assert higher_is_better("faithfulness") is True and higher_is_better("hallucination") is False  # judge metrics
    assert higher_is_better("no_such_metric") is None  # a name the registry does not know has no direction
    assert higher_is_better("latency_p95_ms") is False and higher_is_better("ttft_mean_ms") is False
    assert higher_is_better("output_tokens_per_s") is True  # a throughput: more is better
    assert higher_is_better("cost_usd_total") is False and higher_is_better("error_rate") is False
    assert higher_is_better("tokens_in_total") is None
    with pytest.raises(KeyError):
        get_metric("recall@five")


def test_registration_errors() -> None:
    with pytest.raises(ValueError, match="unknown metric family"):
        metric(name="x", family="vibes", description="d", citation="c")
    with pytest.raises(ValueError, match="registered twice"):

        @metric(name="mrr", family="retrieval", description="another mrr", citation="c")
        def other_mrr(r: object) -> float:
            return 0.0


@pytest.mark.parametrize("q", [0, 50, 90, 95, 99, 100])
def test_percentile_matches_numpy_linear(q: float) -> None:
    rng = np.random.default_rng(int(q))
    for n in (1, 2, 5, 101):
        values = rng.exponential(300.0, size=n).tolist()
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-12)
    assert percentile([], q) is None


def test_system_helpers() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert mean([100.0, 200.0, 600.0]) == 300.0
    assert mean([]) is None
    assert tokens_per_second([50, 150], [500.0, 1500.0]) == 100.0
    assert tokens_per_second([], []) is None
    assert error_rate(1, 4) == 0.25
    assert error_rate(0, 0) is None
    assert sample_cost(0.5, 1000, 1000, 1.0, 2.0) == 0.5  # reported cost wins
    assert sample_cost(None, 1_000_000, 500_000, 1.0, 2.0) == pytest.approx(2.0)
    assert sample_cost(None, 1000, None, None, None) is None


def test_the_registry_loads_every_metric_module_itself() -> None:
    """A fresh interpreter that imports only the registry lists every metric defined on disk (one decorator each)."""
    import subprocess
    import sys
    from pathlib import Path

    import goldset.evaluation.metrics as package

    folder = Path(package.__file__).parent
    on_disk = sum(f.read_text(encoding="utf-8").count("\n@metric(") for f in folder.glob("*.py"))
    code = (
        "from goldset.evaluation.metrics.registry import higher_is_better, list_metrics\n"
        "print(higher_is_better('error_rate'), len(list_metrics()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", str(on_disk)]
    assert on_disk == len(list_metrics()) >= 19


def test_metric_order_sorts_cutoffs_as_numbers() -> None:
    from goldset.evaluation.metrics import metric_order

    assert sorted(["ndcg@10", "mrr", "ndcg@3", "ndcg@1"], key=metric_order) == ["mrr", "ndcg@1", "ndcg@3", "ndcg@10"]
