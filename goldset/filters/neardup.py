"""Sub-quadratic near-duplicate search: numpy MinHash + LSH banding, candidates verified exactly.

Why our own MinHash instead of datasketch: datasketch hashes each shingle and updates each signature in Python
(reported ~470 s for 100k texts); here every text's character shingles are hashed in one vectorised pass over
a single code-point array, each permutation is one multiply-shift over that array plus one
``np.minimum.reduceat``, and LSH buckets are found by sorting band keys, never with Python dicts per text.
``benchmarks/bench_filters.py`` measures both.

Shingles are character n-grams (default 3) of :func:`goldset.filters.textsim.canonical` text, i.e. tokens
joined by spaces: trigram pieces for Latin text, character bigrams for CJK text. Candidate pairs (texts that
share a band bucket) are verified with rapidfuzz's normalised Indel similarity on the same canonical strings,
so the reported similarity is exact and symmetric; LSH only decides which pairs are looked at.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from goldset.filters.textsim import canonical

if TYPE_CHECKING:
    import numpy as np

_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class LSHParams:
    """``num_perm`` = ``bands`` × rows; the similarity where a pair becomes a likely candidate is ≈ (1/b)^(1/r)."""

    num_perm: int = 120
    bands: int = 20
    shingle: int = 3
    seed: int = 20250101

    @property
    def rows(self) -> int:
        """Rows per band: ``num_perm`` / ``bands``."""
        return self.num_perm // self.bands


def _splitmix(x: np.ndarray) -> np.ndarray:
    """A strong 64-bit mixer (splitmix64 finaliser), vectorised and in place on a copy (large arrays: every
    temporary costs fresh pages); numpy's uint64 arithmetic wraps silently."""
    import numpy as np

    x = x + np.uint64(0x9E3779B97F4A7C15)
    t = np.empty_like(x)
    np.right_shift(x, np.uint64(30), out=t)
    np.bitwise_xor(x, t, out=x)
    np.multiply(x, np.uint64(0xBF58476D1CE4E5B9), out=x)
    np.right_shift(x, np.uint64(27), out=t)
    np.bitwise_xor(x, t, out=x)
    np.multiply(x, np.uint64(0x94D049BB133111EB), out=x)
    np.right_shift(x, np.uint64(31), out=t)
    np.bitwise_xor(x, t, out=x)
    return x


_BLOCK = 1024  # texts per block: the block's shingle arrays stay in the CPU cache (3-4x faster than one pass)


def shingle_hashes(texts: Sequence[str], k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Hashed character k-grams of each (already canonical) text, computed block by block.

    Returns ``(hashes, counts)``: the hashes of all texts back to back and how many belong to each text. A text
    shorter than k is padded so that it still has one shingle (empty texts all share the same one).
    """
    import numpy as np

    if not texts:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    parts = [_shingle_block(texts[s : s + _BLOCK], k) for s in range(0, len(texts), _BLOCK)]
    return np.concatenate([h for h, _ in parts]), np.concatenate([c for _, c in parts])


def _shingle_block(texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shingle_hashes` of one block, in one vectorised pass (a text's hashes depend on it alone)."""
    import numpy as np

    padded = [t if len(t) >= k else t + "\x01" * (k - len(t)) for t in texts]
    joined = "\x00".join(padded)
    cp = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(cp)
    if n < k:
        return np.zeros(0, dtype=np.uint64), np.zeros(len(texts), dtype=np.int64)
    m = n - k + 1
    # Polynomial rolling value of each window (wraps mod 2^64), then mixed.
    val = cp[:m].copy()
    base = np.uint64(0x100000001B3)
    for j in range(1, k):
        np.multiply(val, base, out=val)
        np.add(val, cp[j : j + m], out=val)
    csum = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(cp == 0, out=csum[1:])
    keep = csum[k:] == csum[:m]  # the window holds no separator
    doc = csum[:m][keep]  # separators before the window start = index of its text
    hashes = _splitmix(val[keep])
    counts = np.bincount(doc, minlength=len(texts)).astype(np.int64)
    return hashes, counts


def minhash_signatures(texts: Sequence[str], params: LSHParams) -> np.ndarray:
    """MinHash signatures, shape (len(texts), num_perm), uint32, of canonical texts.

    Permutation p maps a shingle's 32-bit hash x to ``a_p * x + b_p mod 2^32`` (``a_p`` odd: a bijection);
    32-bit arithmetic halves the memory traffic of the 64-bit version. Texts are processed in blocks of
    ``_BLOCK`` so that each permutation pass reads a cache-resident array, not one of the whole corpus.
    """
    import numpy as np

    if not texts:
        return np.zeros((0, params.num_perm), dtype=np.uint32)
    rng = np.random.default_rng(params.seed)
    a = rng.integers(1, 2**32, size=params.num_perm, dtype=np.uint64).astype(np.uint32) | np.uint32(1)
    b = rng.integers(0, 2**32, size=params.num_perm, dtype=np.uint64).astype(np.uint32)
    sig = np.empty((len(texts), params.num_perm), dtype=np.uint32)

    def fill(s: int) -> None:
        block = texts[s : s + _BLOCK]
        hashes64, counts = _shingle_block(block, params.shingle)
        hashes = (hashes64 >> np.uint64(32)).astype(np.uint32)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        out = sig[s : s + len(block)]
        h = np.empty_like(hashes)
        for p in range(params.num_perm):
            np.multiply(hashes, a[p], out=h)
            np.add(h, b[p], out=h)
            out[:, p] = np.minimum.reduceat(h, starts)

    # numpy releases the GIL in these loops; each block writes its own rows, so threads give the same result.
    _each(fill, range(0, len(texts), _BLOCK), parallel=True)
    return sig


def _workers() -> int:
    """Threads for the numpy and rapidfuzz loops: the CPUs this process may run on, at most 4."""
    import os

    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(4, n))


def band_keys(sig: np.ndarray, params: LSHParams) -> np.ndarray:
    """One 64-bit key per (text, band), shape (n, bands): equal keys = same bucket in that band."""
    import numpy as np

    n = sig.shape[0]
    r = params.rows
    keys = np.empty((n, params.bands), dtype=np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)

    def fill(band: int) -> None:
        acc = np.full(n, np.uint64(band + 1), dtype=np.uint64)
        for j in range(band * r, band * r + r):
            acc = _splitmix(acc * mult + sig[:, j].astype(np.uint64))
        keys[:, band] = acc

    _each(fill, range(params.bands), parallel=n >= 10_000)  # each band writes its own column
    return keys


def _each(func: Callable[[int], Any], items: range, *, parallel: bool) -> list[Any]:
    """``[func(i) for i in items]``, on :func:`_workers` threads when ``parallel`` (numpy releases the GIL);
    results in the order of ``items`` either way."""
    workers = _workers() if parallel else 1
    if workers > 1 and len(items) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(func, items))
    return [func(i) for i in items]


def _bucket_pairs(keys: np.ndarray, max_bucket: int, window: int = 8) -> np.ndarray:
    """Candidate index pairs (i < j) sharing a bucket in any band, as one array of shape (k, 2), unique.

    A bucket of up to ``max_bucket`` texts yields all its pairs; a larger one (a boilerplate shingle set shared
    by many texts) yields the pairs of members at most ``window`` apart in index order (a sliding window, linear
    in the bucket's size; 8 finds what 50 finds on bench_filters' 100,000 questions at a fifth of the cost).
    Callers give the texts in sorted canonical order (:func:`similar_texts`), so alike texts are neighbours and
    the window, with every verdict, does not depend on the order the texts came in. All of it vectorised: for
    each distance d, the pairs (k-th, k+d-th) of sorted bucket members.
    """
    import numpy as np

    n, bands = keys.shape

    def band_pairs(band: int) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        col = keys[:, band]
        order = np.argsort(col, kind="stable")
        sk = col[order]
        new_run = np.concatenate([[True], sk[1:] != sk[:-1]])
        run_id = np.cumsum(new_run) - 1
        run_start = np.flatnonzero(new_run)
        run_len = np.diff(np.concatenate([run_start, [n]]))
        length = run_len[run_id]  # length of the run each sorted position is in
        shared = np.flatnonzero(length > 1)  # most texts are alone in their bucket: drop them at once
        if not len(shared):
            return out
        length = length[shared]
        pos = shared - run_start[run_id[shared]]  # position within its run
        # Pairs at distance d inside a run: (idx, idx + d) for positions with pos + d < run length; every pair of
        # a run of up to max_bucket members, the `window` nearest neighbours in a larger one.
        sel = np.arange(len(shared))
        d = 1
        limit = max(max_bucket, window, 1)
        while len(sel) and d <= limit:
            sel = sel[(pos[sel] + d < length[sel]) & ((length[sel] <= max_bucket) | (d <= window))]
            if not len(sel):
                break
            out.append(np.stack([order[shared[sel]], order[shared[sel] + d]], axis=1))
            d += 1
        return out

    # Bands are independent and the result is sorted below: threads cannot change it.
    out = [a for part in _each(band_pairs, range(bands), parallel=n >= 10_000) for a in part]
    if not out:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate(out).astype(np.int64)
    pairs.sort(axis=1)
    code = _sorted_unique(pairs[:, 0] * n + pairs[:, 1])
    return np.stack([code // n, code % n], axis=1)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values; a plain sort beats np.unique's hash path on millions of int64 here."""
    import numpy as np

    if not len(values):
        return values
    values = np.sort(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])]


def verify(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Element-wise normalised Indel similarity of canonical strings a[i], b[i] (rapidfuzz, in C)."""
    import numpy as np
    from rapidfuzz import process
    from rapidfuzz.distance import Indel

    if not a:
        return np.zeros(0, dtype=np.float64)
    workers = _workers() if len(a) >= 10_000 else 1  # element-wise: the same values with any number of threads
    return np.asarray(process.cpdist(a, b, scorer=Indel.normalized_similarity, workers=workers), dtype=np.float64)


@dataclass(frozen=True)
class SimilarPair:
    """Texts ``i`` < ``j`` (indices) and their verified similarity."""

    i: int
    j: int
    similarity: float


def similar_pairs(
    texts: Sequence[str], threshold: float, params: LSHParams | None = None, *, max_bucket: int = 50
) -> list[SimilarPair]:
    """All pairs (i < j) of ``texts`` whose canonical similarity is ≥ ``threshold``, found via LSH, sorted.

    The same pairs come out whatever the order of ``texts`` (see :func:`similar_texts`). Texts repeated k times
    give k(k-1)/2 pairs: callers with many exact repeats should use :func:`similar_texts`.
    """
    forms, edges = similar_texts(texts, threshold, params, max_bucket=max_bucket)
    found = [(a, b, 1.0) for same in forms.repeats.values() for n, a in enumerate(same) for b in same[n + 1 :]]
    one, repeats = forms.first, forms.repeats
    for i, j, sim in edges:
        if i in repeats or j in repeats:
            found.extend((min(a, b), max(a, b), sim) for a in forms.texts(i) for b in forms.texts(j))
        else:  # the common case: one text per form
            a, b = one[i], one[j]
            found.append((a, b, sim) if a < b else (b, a, sim))
    found.sort()  # plain tuples sort in C; the records are made once, in order
    return [SimilarPair(i, j, sim) for i, j, sim in found]


@dataclass(frozen=True)
class TextForms:
    """The distinct canonical forms of some texts, in sorted order of the forms: ``first[k]`` is the first text
    (index) of form k, ``repeats[k]`` all its texts when there are several (rare: one list per form would cost
    more than the rest of the grouping)."""

    first: list[int]
    repeats: dict[int, list[int]]

    def texts(self, form: int) -> list[int]:
        """The texts (indices) whose canonical form is ``form``."""
        return self.repeats.get(form) or [self.first[form]]

    def form_of(self) -> list[int]:
        """For each text, its form."""
        out = [0] * (len(self.first) + sum(len(same) - 1 for same in self.repeats.values()))
        for k, i in enumerate(self.first):
            out[i] = k
        for k, same in self.repeats.items():
            for i in same:
                out[i] = k
        return out


def similar_texts(
    texts: Sequence[str], threshold: float, params: LSHParams | None = None, *, max_bucket: int = 50
) -> tuple[TextForms, list[tuple[int, int, float]]]:
    """Near-duplicates among the *distinct* canonical forms of ``texts``.

    Returns the forms (:class:`TextForms`: texts identical once canonical share one, similarity 1) and the verified
    pairs ``(i, j, similarity)`` of distinct forms (i < j) at or above ``threshold``. The LSH runs over the forms
    in sorted order, so which candidates a large bucket yields depends on the texts alone, never on the order
    they came in.
    """
    params = params or LSHParams()
    canon = [canonical(t) for t in texts]
    first_of = {c: i for i, c in reversed(list(enumerate(canon)))}  # each form's first text
    distinct = sorted(first_of)
    repeats: dict[int, list[int]] = {}
    if len(first_of) < len(canon):  # some forms repeat (few): list all their texts
        repeated = {c for c, k in Counter(canon).items() if k > 1}
        grouped: dict[str, list[int]] = {c: [] for c in repeated}
        for i, c in enumerate(canon):
            if c in repeated:
                grouped[c].append(i)
        repeats = {bisect_left(distinct, c): same for c, same in grouped.items()}
    forms = TextForms(first=[first_of[c] for c in distinct], repeats=repeats)
    if len(distinct) < 2:
        return forms, []
    sig = minhash_signatures(distinct, params)
    cand = _bucket_pairs(band_keys(sig, params), max_bucket)
    sims = verify([distinct[i] for i in cand[:, 0].tolist()], [distinct[j] for j in cand[:, 1].tolist()])
    keep = sims >= threshold  # most candidates fail: select before building Python objects
    return forms, list(zip(cand[keep, 0].tolist(), cand[keep, 1].tolist(), sims[keep].tolist(), strict=True))


def groups_from_pairs(n: int, pairs: Sequence[SimilarPair]) -> list[list[int]]:
    """Connected components (size ≥ 2) of the similarity graph, each sorted, ordered by first member."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        ri, rj = find(p.i), find(p.j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    comps: dict[int, list[int]] = {}
    for x in range(n):
        comps.setdefault(find(x), []).append(x)
    return sorted((sorted(c) for c in comps.values() if len(c) > 1), key=lambda c: c[0])


def duplicate_groups(
    texts: Sequence[str], threshold: float, params: LSHParams | None = None
) -> tuple[list[list[int]], list[SimilarPair]]:
    """Groups of near-duplicate texts (indices) and the verified pairs that joined them."""
    pairs = similar_pairs(texts, threshold, params)
    return groups_from_pairs(len(texts), pairs), pairs


class SentenceIndex:
    """MinHash LSH index of source sentences, queried in batches: which sentences look like each text?

    Used by the question–source overlap check to look beyond a pair's own evidence chunk at every sentence of
    the KB without comparing every question with every sentence.
    """

    def __init__(self, sentences: Sequence[str], params: LSHParams | None = None) -> None:
        import numpy as np

        self.params = params or LSHParams()
        self.sentences = list(dict.fromkeys(s for s in sentences if s.strip()))
        self._canon = [canonical(s) for s in self.sentences]
        keys = band_keys(minhash_signatures(self._canon, self.params), self.params)
        self._keys = keys
        self._order = [np.argsort(keys[:, b], kind="stable") for b in range(self.params.bands)]
        self._sorted = [keys[self._order[b], b] for b in range(self.params.bands)]

    def __len__(self) -> int:
        return len(self.sentences)

    def query_many(
        self, texts: Sequence[str], threshold: float = 0.0, limit: int = 20
    ) -> list[list[tuple[int, float]]]:
        """For each text, up to ``limit`` (sentence index, similarity) candidates at or above ``threshold``."""
        import numpy as np

        if not texts or not self.sentences:
            return [[] for _ in texts]
        canon = [canonical(t) for t in texts]
        qkeys = band_keys(minhash_signatures(canon, self.params), self.params)
        qi_parts, si_parts = [], []
        for b in range(self.params.bands):
            sk, order = self._sorted[b], self._order[b]
            # Sorted queries search ~3x faster (the probes walk the table in order); scattered back by index.
            qord = np.argsort(qkeys[:, b])
            qsorted = qkeys[qord, b]
            lo = np.empty(len(qord), dtype=np.intp)
            hi = np.empty(len(qord), dtype=np.intp)
            lo[qord] = np.searchsorted(sk, qsorted, side="left")
            hi[qord] = np.searchsorted(sk, qsorted, side="right")
            width = np.minimum(hi - lo, limit)
            hit = np.flatnonzero(width > 0)
            if not len(hit):
                continue
            w = width[hit]
            # Positions lo[q] .. lo[q] + w[q] - 1 for every hit q, without a Python loop.
            offsets = np.arange(int(w.sum())) - np.repeat(np.cumsum(w) - w, w)
            qi_parts.append(np.repeat(hit, w))
            si_parts.append(order[np.repeat(lo[hit], w) + offsets])
        found: list[list[tuple[int, float]]] = [[] for _ in texts]
        if not qi_parts:
            return found
        qi = np.concatenate(qi_parts).astype(np.int64)
        si = np.concatenate(si_parts).astype(np.int64)
        code = _sorted_unique(qi * len(self.sentences) + si)
        qi, si = code // len(self.sentences), code % len(self.sentences)
        sims = verify([canon[q] for q in qi.tolist()], [self._canon[s] for s in si.tolist()])
        keep = sims >= threshold  # select in numpy (order kept) before building Python tuples
        for q, s, sim in zip(qi[keep].tolist(), si[keep].tolist(), sims[keep].tolist(), strict=True):
            found[q].append((s, sim))
        for lst in found:
            lst.sort(key=lambda t: -t[1])
            del lst[limit:]
        return found

    def candidates(self, text: str, limit: int = 20) -> list[str]:
        """Sentences that share an LSH bucket with ``text``, most similar first."""
        return [self.sentences[i] for i, _ in self.query_many([text], limit=limit)[0]]
