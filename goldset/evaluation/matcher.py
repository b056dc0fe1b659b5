"""Which retrieved contexts are relevant to a pair: the matcher. It decides every retrieval number.

Users' systems chunk documents their own way, so a retrieved context rarely *is* one of goldset's chunks. A
pair's evidence is a list of verbatim quotes, each with the chunk and document it came from; a context is
relevant when it matches one of them. Modes (``eval.matcher``):

``text``
    The units are the pair's distinct quotes. Quote and context are compared as token sequences
    (:func:`goldset.text.tokenize`: NFKC, case-folded, punctuation and whitespace ignored, one token per CJK
    character), so line breaks, Markdown emphasis or full-width punctuation do not matter. A context matches a
    quote when it holds the whole quote, or, for a quote of at least ``text_match_min_tokens`` tokens cut by a
    chunk boundary, when it holds a first or last part of the quote with ``text_match_min`` of its *letters*
    (the characters of its tokens) spanning at least ``text_match_min_tokens`` tokens, or lies wholly inside the
    quote with as many letters and tokens. Letters, not tokens: a chunk boundary cuts words, and a cut word's
    letters count for the side holding them, so with the default 0.5 a quote cut in two counts for the context
    holding the larger piece (in tokens, a quote of 19 cut inside its 10th word left 9 whole tokens on either side
    and counted for neither); and a Chinese character does not weigh as much as ``OAuth2PasswordRequestForm``.
    The token floor keeps a few common words from matching. Short quotes (fewer tokens than the floor) must
    appear whole, on token boundaries ("3.8" does not match "3.80"); in a long one the first and last token may
    be parts of words, so a quote or a context cut in the middle of a word still matches. Where a matching part
    ends inside one of the quote's words, the context's word there must be that word or its start (the context
    was cut there): half a quote ending "...imag" of "image01" is not held by a context reading "image02".
    Systems that index *rendered* text (a crawler of the documentation site, a Markdown-to-text loader) keep a
    link's text but not its target, and no HTML tags or attribute blocks (``{ #anchor }``), whose words a quote
    copied from the Markdown source may hold: such a quote, or the half a context must hold, is then in none of
    their contexts. With ``text_match_rendered`` a context that shows no such markup is also compared with the
    quote as rendered, those words left out (:meth:`Matcher.rendered`; its halves count what a reader sees); a
    context that shows markup came from a system that kept it and is compared with the quote as written. Off by
    default: it costs about a tenth of the matching time, and for a system that keeps the Markdown it can only
    add matches whose half is counted without the link targets.
``chunk_id`` / ``doc_id``
    The units are the distinct evidence chunk (document) ids; a context matches when it carries that id.
    For systems that index goldset's own chunks (chunk_id) or only want the right document (doc_id).
``auto`` (default)
    Units are quotes, as for ``text``. A context matches a quote when its text does (as above) or when it
    carries the id of the chunk the quote was taken from (ids are trusted when present); a context with no
    text and no chunk id falls back to its document id.

How matches become per-rank relevance (each unit counts once, at the first rank that finds it; each context
counts once at its rank) is defined in :mod:`goldset.evaluation.metrics.retrieval`. Context recall also counts a
quote as covered when pieces of it in several contexts together hold ``text_match_min`` of its letters.

Performance: before tokenising a context, a cheap necessary check runs on its case-folded text (the quote's
longest tokens must occur in it), so most non-matching contexts are never tokenised; tokenised contexts are cached
by text (real systems retrieve from a fixed index, so the same chunk texts recur). A (context, quote) comparison is
then a few substring searches in C, never a token-by-token alignment. With ``text_match_rendered``, a context
that fails a quote with markup is searched for markup once (cached by text), and the quote's rendered form is
built when a context without markup first passes its cheap check. A context more than twice as long as the quote
(in characters, + 32) is never taken to lie *inside* it.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Literal

from goldset.evaluation.metrics.retrieval import RankedRelevance
from goldset.text import tokenize

if TYPE_CHECKING:
    from goldset.evaluation.settings import EvalSettings
    from goldset.schema.pairs import Evidence, QAPair
    from goldset.schema.runs import RetrievedContext

MatcherMode = Literal["auto", "text", "chunk_id", "doc_id"]
MODES: tuple[str, ...] = ("auto", "text", "chunk_id", "doc_id")

#: HTML elements whose tags (with their attributes) are markup. A list, not any ``<word ...>``: ``<T>`` and
#: ``Map<String, Integer>`` in code are text.
_HTML_TAGS = (
    "a|abbr|b|bdi|bdo|blockquote|br|button|caption|center|cite|code|col|dd|del|details|dfn|div|dl|dt|em|figcaption|"
    "figure|font|h[1-6]|hr|i|iframe|img|input|ins|kbd|label|li|mark|ol|p|picture|pre|q|s|samp|section|small|source|"
    "span|strong|sub|summary|sup|table|tbody|td|tfoot|th|thead|tr|tt|u|ul|var|video"
)
#: Markup whose *words* a renderer drops (punctuation needs no rule: tokens ignore it): link and image targets
#: (their text stays), HTML tags with their attributes, attribute blocks (``{ #anchor }``,
#: ``{.internal-link target=_blank}``), each also where the end of the quote cuts it. Every branch starts with a
#: literal character, which lets the regular expression engine skip to the candidates.
_MARKUP_RE = re.compile(
    r"\]\([^()\s]*(?:\)|$)"  # [text](target), or its target cut by the end of the quote
    rf"|</?(?i:{_HTML_TAGS})(?:\s+[\w-]+=[^<>]*|\s*/)?(?:>|$)"  # a tag with its attributes, or cut by the end
    r"|\{ ?[#.:][^{}\n]*(?:\}|$)"  # attribute blocks, or cut by the end
)
#: The same markup cut by the start of the quote (a quote may begin inside a link target, a tag or a block).
_MARKUP_START_RE = re.compile(
    r"(?=[^()\s\[\]<>]*[./#-])[^()\s\[\]<>]*+\)"  # ...docs.python.org/3/glossary.html#term-file-object)
    rf"|/?(?i:{_HTML_TAGS})(?:\s+[\w-]+=[^<>]*|\s*/)?>"  # span>, abbr title="...">
    r"|[^<>\"\n]*+\"(?:[^<>\"\n]*+\")?\s*/?>"  # ...known as components">, ...ss="termy">
    r"|[\w\-=. ]{0,80}+\}"  # cookie-parameters }, internal-link target=_blank}
)
_MARKUP_HINT = frozenset("]<>{})")  # a quote without these characters has no markup words


def _without_markup(quote: str) -> str | None:
    """The quote without its markup words (replaced by a space, which never joins two words); None when it has
    none."""
    opening = quote[:200]
    start = _MARKUP_START_RE.match(quote) if ")" in opening or ">" in opening or "}" in opening else None
    rest = quote[start.end() :] if start else quote
    plain = _MARKUP_RE.sub(" ", rest)
    return plain if start or plain != rest else None


#: Markup a rendered text does not contain: a context with some is compared with quotes as written only.
_CONTEXT_MARKUP_RE = re.compile(rf"\]\(|</?(?i:{_HTML_TAGS})[\s/>]|\{{ ?[#.]")

_CACHE_LIMIT = 20_000  # distinct context texts kept tokenised and folded (~100 MB at worst); cleared when full


def canonical(text: str) -> str:
    """Space-padded, space-joined tokens: `` tok tok tok ``; token-sequence containment is then substring
    containment (the padding keeps matches on token boundaries). Empty when the text has no tokens."""
    tokens = tokenize(text)
    return f" {' '.join(tokens)} " if tokens else ""


@dataclass(slots=True)
class EvidenceUnit:
    """One relevant unit of a pair: a distinct quote (text/auto) or a distinct chunk/document id. Read-only by
    convention, not ``frozen``: a frozen dataclass sets each of these fields through ``object.__setattr__``, ~2 µs a
    unit, and two or three units are made for every sample scored (~5% of the matching time)."""

    key: str
    chunk_ids: frozenset[str]
    doc_ids: frozenset[str]
    tokens: tuple[str, ...] = ()
    pattern: str = ""  # canonical quote: padded (short quotes, whole tokens) or bare (long quotes); "" for id units
    need: int = 0  # letters (non-space characters of `pattern`) a partial match must hold (0 = whole quote only)
    head: str = ""  # bare canonical prefix holding `need` letters and at least `min_tokens` tokens
    tail: str = ""  # the same at the end
    head_min: str = ""  # bare canonical first `min_tokens` tokens: the smallest piece counted
    tail_min: str = ""
    head_rest: str | None = None  # rest of the quote's token the head ends in ("" = a whole token; None = quote end)
    tail_lead: str | None = None  # start of the quote's token the tail begins in ("" = whole; None = quote start)
    head_anchors: tuple[str, ...] = ()  # tokens any context holding the head (or whole quote) must contain
    tail_anchors: tuple[str, ...] = ()
    max_inside_chars: int = 0  # a longer context text cannot lie inside the quote
    block: int = 0  # a context inside the quote holds one of its blocks of this many tokens (0: no check)
    text: str = ""  # the quote as written, when it may hold markup words (see Matcher.rendered)

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


def _pad(tokens: Sequence[str]) -> str:
    return f" {' '.join(tokens)} "


def _anchors(tokens: Sequence[str]) -> tuple[str, ...]:
    """The distinct tokens, longest first: a context holding the tokens holds each of them in its folded text.

    All are checked (the check stops at the first one missing, usually a long and so selective word), because
    single CJK characters are weak on their own: eight of them together are not.
    """
    return tuple(sorted(set(tokens), key=len, reverse=True))


def _goes_on(c: str, piece: str, rest: str | None) -> bool:
    """Whether canonical context ``c`` holds ``piece`` (a head) followed, up to the end of the context's token, by
    a prefix of ``rest``: the context's word there is the quote's word (or the start of it, where the context was
    cut), not another word that starts the same ("ima" ends a head cut in "image01": "image02" is another word).
    ``rest`` None: the head is the whole quote, whose last word may be cut itself, so anything may follow."""
    if rest is None:
        return True
    i = c.find(piece)
    while i >= 0:
        j = i + len(piece)
        if rest.startswith(c[j : c.index(" ", j)]):
            return True
        i = c.find(piece, i + 1)
    return False


def _comes_after(c: str, piece: str, lead: str | None) -> bool:
    """:func:`_goes_on` for a tail: what precedes it in the context's token must end ``lead``."""
    if lead is None:
        return True
    i = c.find(piece)
    while i >= 0:
        if lead.endswith(c[c.rindex(" ", 0, i + 1) + 1 : i]):
            return True
        i = c.find(piece, i + 1)
    return False


def _letters(canon: str, n_tokens: int) -> int:
    """Letters (non-space characters) of a space-padded canonical text of ``n_tokens`` tokens."""
    return len(canon) - n_tokens - 1 if canon else 0


def _holds_a_block(folded: str, tokens: tuple[str, ...], size: int) -> bool:
    """Whether ``folded`` holds each token of one of the quote's consecutive blocks of ``size`` tokens. A context
    inside the quote spans >= min_tokens = 2 × size + 2 of its tokens; all but its two edge tokens (which may be
    parts of words) are whole, so it holds one whole block. (Blocks are sliced here, when a context is short enough
    to lie inside the quote, not built for every quote: most never meet one.)"""
    if size < 1:
        return True
    return any(all(map(folded.__contains__, tokens[i : i + size])) for i in range(0, len(tokens) - size + 1, size))


class _View:
    """One context, tokenised only if a cheap check on its folded text says it could match (lazy, cached)."""

    __slots__ = ("_c", "_folded", "_markup", "matcher", "text")

    def __init__(self, matcher: Matcher, text: str) -> None:
        self.matcher = matcher
        self.text = text
        self._folded: str | None = None
        self._c: tuple[str, int] | None = None
        self._markup: bool | None = None

    def markup(self) -> bool:
        """Whether the context shows Markdown or HTML markup (so its system did not index rendered text)."""
        if self._markup is None:
            self._markup = self.matcher.shows_markup(self.folded())
        return self._markup

    def folded(self) -> str:
        if self._folded is None:
            self._folded = self.matcher.fold(self.text)
        return self._folded

    def canon(self) -> tuple[str, int]:
        if self._c is None:
            self._c = self.matcher.canon(self.text)
        return self._c


class Matcher:
    """Decides which contexts match which evidence units. Holds caches: reuse one matcher for a whole run."""

    def __init__(
        self, mode: str = "auto", min_share: float = 0.5, min_tokens: int = 8, rendered_text: bool = False
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown matcher {mode!r}; use one of {', '.join(MODES)}")
        if not 0 < min_share <= 1 or min_tokens < 1:
            raise ValueError("min_share must be in (0, 1] and min_tokens >= 1")
        self.mode = mode
        self.min_share = min_share
        self.min_tokens = min_tokens
        self.rendered_text = rendered_text  # also compare contexts without markup with quotes as rendered
        self._cache: dict[str, tuple[str, int]] = {}
        self._folds: dict[str, str] = {}
        self._rendered: dict[str, EvidenceUnit] = {}
        self._plain: dict[str, tuple[str, ...]] = {}
        self._marks: dict[str, bool] = {}

    @classmethod
    def from_settings(cls, settings: EvalSettings) -> Matcher:
        return cls(
            settings.matcher, settings.text_match_min, settings.text_match_min_tokens, settings.text_match_rendered
        )

    # -- units -------------------------------------------------------------------------------------------------

    def units(self, evidence: QAPair | Sequence[Evidence]) -> list[EvidenceUnit]:
        """The pair's distinct relevant units, in evidence order."""
        entries = evidence.evidence if hasattr(evidence, "evidence") else evidence
        if self.mode in ("chunk_id", "doc_id"):
            attr = self.mode
            groups: dict[str, list[Evidence]] = {}
            for e in entries:
                groups.setdefault(getattr(e, attr), []).append(e)
            return [
                EvidenceUnit(key, frozenset(e.chunk_id for e in es), frozenset(e.doc_id for e in es))
                for key, es in groups.items()
            ]
        by_quote: dict[tuple[str, ...], list[Evidence]] = {}
        for e in entries:
            by_quote.setdefault(tuple(tokenize(e.quote)), []).append(e)
        out = []
        for tokens, es in by_quote.items():
            chunk_ids = frozenset(e.chunk_id for e in es)
            doc_ids = frozenset(e.doc_id for e in es)
            if not tokens:  # a quote of punctuation only: only its ids can match it
                out.append(EvidenceUnit(es[0].quote, chunk_ids, doc_ids))
                continue
            quote = es[0].quote
            text = quote if self.rendered_text and not _MARKUP_HINT.isdisjoint(quote) else ""
            out.append(self._unit(tokens, chunk_ids, doc_ids, max(len(e.quote) for e in es), text))
        return out

    def _unit(
        self, tokens: tuple[str, ...], chunk_ids: frozenset[str], doc_ids: frozenset[str], longest: int, text: str
    ) -> EvidenceUnit:
        """The unit of a quote of ``tokens`` (``longest``: its longest text, in characters)."""
        key = " ".join(tokens)
        n = len(tokens)
        m = self.min_tokens
        if n < m:
            return EvidenceUnit(key, chunk_ids, doc_ids, tokens, _pad(tokens), head_anchors=_anchors(tokens), text=text)
        pattern = key  # tokens joined by single spaces: token j starts at cum[j - 1] + j
        size = len(pattern)
        cum = list(accumulate(map(len, tokens)))  # letters up to and including each token
        letters = cum[-1]
        need = math.ceil(self.min_share * letters - 1e-9)
        # the first m tokens end at head_min; the last m start at tail_min
        head_min, tail_min = cum[m - 1] + m - 1, (cum[n - m - 1] + n - m if n > m else 0)
        # the head holding `need` letters ends in token j = the first with cum[j] >= need; the tail holding them
        # starts in token t = the first with cum[t] > letters - need (either may cut that token)
        head = max(need + bisect.bisect_left(cum, need), head_min)
        tail = min(letters - need + bisect.bisect_right(cum, letters - need), tail_min)
        end = pattern.find(" ", head)
        head_rest = pattern[head : end if end >= 0 else size] if head < size else None
        tail_lead = pattern[pattern.rfind(" ", 0, tail) + 1 : tail] if tail else None
        return EvidenceUnit(
            key, chunk_ids, doc_ids, tokens, pattern, need, pattern[:head], pattern[tail:], pattern[:head_min],
            pattern[tail_min:], head_rest, tail_lead, _anchors(tokens[:m]), _anchors(tokens[-m:]), 2 * longest + 32,
            (m - 2) // 2, text,
        )  # fmt: skip

    def rendered(self, u: EvidenceUnit) -> EvidenceUnit | None:
        """The unit of ``u``'s quote as a Markdown renderer shows it: without the words of link targets, HTML tags
        and attribute blocks (:func:`_without_markup`); None when it has none, or nothing else. Built when first
        needed and cached: a system that indexes the rendered text never holds those words, so a quote with one in
        the part a context must hold could never match it as written."""
        if not self._plain_tokens(u):
            return None
        unit = self._rendered.get(u.text)
        if unit is None:
            if len(self._rendered) >= _CACHE_LIMIT:
                self._rendered.clear()
            unit = self._rendered[u.text] = self._unit(
                self._plain_tokens(u), u.chunk_ids, u.doc_ids, (u.max_inside_chars - 32) // 2, ""
            )
        return unit

    def _plain_tokens(self, u: EvidenceUnit) -> tuple[str, ...]:
        """Tokens of ``u``'s quote without its markup words; () when it has none (cached by quote)."""
        if not u.text:
            return ()
        hit = self._plain.get(u.text)
        if hit is None:
            plain = _without_markup(u.text)
            hit = tuple(tokenize(plain)) if plain is not None else ()
            if hit == u.tokens:
                hit = ()
            if len(self._plain) >= _CACHE_LIMIT:
                self._plain.clear()
            self._plain[u.text] = hit
        return hit

    def _could_match_rendered(self, v: _View, u: EvidenceUnit) -> bool:
        """A cheap necessary check before the rendered form of ``u`` is built for context ``v`` (most contexts of a
        run hold no part of a given quote): the quote's first or last ``min_tokens`` words as rendered, or a text
        short enough to lie inside it."""
        tokens = self._plain_tokens(u)
        if not tokens:
            return False
        f = v.folded()
        m = self.min_tokens
        if len(tokens) < m:
            return all(map(f.__contains__, tokens))
        return (
            all(map(f.__contains__, tokens[:m]))
            or all(map(f.__contains__, tokens[-m:]))
            or len(v.text) <= u.max_inside_chars
        )

    # -- contexts ----------------------------------------------------------------------------------------------

    def canon(self, text: str) -> tuple[str, int]:
        """(canonical form, token count) of a context text, cached."""
        hit = self._cache.get(text)
        if hit is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            c = canonical(text)
            hit = (c, c.count(" ") - 1 if c else 0)
            self._cache[text] = hit
        return hit

    def shows_markup(self, text: str) -> bool:
        """Whether a (folded) context text shows Markdown or HTML markup (:data:`_CONTEXT_MARKUP_RE`), cached. Keyed
        by the folded text the fold cache returns: the same string object, whose hash Python keeps."""
        hit = self._marks.get(text)
        if hit is None:
            if len(self._marks) >= _CACHE_LIMIT:
                self._marks.clear()
            hit = self._marks[text] = _CONTEXT_MARKUP_RE.search(text) is not None
        return hit

    def fold(self, text: str) -> str:
        """NFKC + case-fold, the form :func:`goldset.text.normalize` tokenises (every token is a substring)."""
        hit = self._folds.get(text)
        if hit is None:
            if len(self._folds) >= _CACHE_LIMIT:
                self._folds.clear()
            key = text
            if not (text.isascii() or unicodedata.is_normalized("NFKC", text)):  # the quick check is ~40x cheaper
                text = unicodedata.normalize("NFKC", text)
            hit = text.casefold()
            self._folds[key] = hit
        return hit

    def _text_match(self, v: _View, u: EvidenceUnit) -> tuple[bool, bool]:
        """(matches, holds a countable piece) for one form of the quote: the second is for context recall's union of
        pieces."""
        if not u.pattern or not v.text:
            return False, False
        f = v.folded()
        head_ok = all(map(f.__contains__, u.head_anchors))
        if not u.need:  # short quote: whole or nothing
            return (head_ok and u.pattern in v.canon()[0]), False
        tail_ok = all(map(f.__contains__, u.tail_anchors))
        inside_ok = len(v.text) <= u.max_inside_chars and _holds_a_block(f, u.tokens, u.block)
        if not (head_ok or tail_ok or inside_ok):
            return False, False
        c, cn = v.canon()
        if not c:
            return False, False
        pre = head_ok and u.head_min in c
        if pre and u.head in c and _goes_on(c, u.head, u.head_rest):  # (the whole quote holds its head too)
            return True, True
        suf = tail_ok and u.tail_min in c
        if suf and u.tail in c and _comes_after(c, u.tail, u.tail_lead):
            return True, True
        inside = inside_ok and self.min_tokens <= cn < u.n_tokens and c[1:-1] in u.pattern
        if inside and _letters(c, cn) >= u.need:
            return True, True
        return False, pre or suf or inside

    def matches(self, context: RetrievedContext, unit: EvidenceUnit) -> bool:
        """Whether one context matches one unit (see the module docstring)."""
        return self._match(context, unit, _View(self, self._text_of(context)))[0]

    def _text_of(self, context: RetrievedContext) -> str:
        return "" if self.mode in ("chunk_id", "doc_id") else context.text

    def _match(self, ctx: RetrievedContext, u: EvidenceUnit, v: _View) -> tuple[bool, bool]:
        mode = self.mode
        if mode == "chunk_id":
            return ctx.chunk_id is not None and ctx.chunk_id == u.key, False
        if mode == "doc_id":
            return ctx.doc_id is not None and ctx.doc_id == u.key, False
        hit, piece = self._text_match(v, u)
        if not hit and u.text and not v.markup() and self._could_match_rendered(v, u):
            r = self.rendered(u)  # a context of rendered text: compare the quote as rendered too
            if r is not None:
                hit, plain_piece = self._text_match(v, r)
                piece = piece or plain_piece
        if hit or mode == "text":
            return hit, piece
        if ctx.chunk_id is not None and ctx.chunk_id in u.chunk_ids:
            return True, True
        if ctx.chunk_id is None and ctx.doc_id is not None and ctx.doc_id in u.doc_ids and not v.canon()[0]:
            return True, True
        return False, piece

    # -- ranking -----------------------------------------------------------------------------------------------

    def relevance(
        self, evidence: QAPair | Sequence[Evidence] | list[EvidenceUnit], contexts: Sequence[RetrievedContext]
    ) -> RankedRelevance:
        """Per-rank relevance of ``contexts`` (in rank order) for a pair (or its precomputed units)."""
        units = evidence if isinstance(evidence, list) and evidence and isinstance(evidence[0], EvidenceUnit) else None
        if units is None:
            units = self.units(evidence)  # type: ignore[arg-type]
        n_units = len(units)
        found = [False] * n_units
        pieces: list[list[str]] | None = None
        rel: list[int] = []
        new_units: list[int] = []
        matched: list[int] = []
        for ctx in contexts:
            view = _View(self, self._text_of(ctx))
            any_hit = False
            new = 0
            for j, u in enumerate(units):
                hit, piece = self._match(ctx, u, view)
                if hit:
                    any_hit = True
                    if not found[j]:
                        found[j] = True
                        new += 1
                elif piece:
                    if pieces is None:
                        pieces = [[] for _ in range(n_units)]
                    pieces[j].append(view.canon()[0])
            rel.append(1 if new else 0)
            new_units.append(new)
            matched.append(1 if any_hit else 0)
        n_found = sum(found)
        covered = n_found
        if pieces is not None:
            covered += sum(1 for j, u in enumerate(units) if not found[j] and pieces[j] and self._covered(u, pieces[j]))
        return RankedRelevance(tuple(rel), tuple(new_units), tuple(matched), n_units, covered)

    def _covered(self, u: EvidenceUnit, contexts: list[str]) -> bool:
        """Whether pieces of quote ``u`` (as written, or as rendered) cover it together."""
        if u.need and self._union_covers(u, contexts):
            return True
        r = self.rendered(u)
        return r is not None and r.need > 0 and self._union_covers(r, contexts)

    def _union_covers(self, u: EvidenceUnit, contexts: list[str]) -> bool:
        """Whether pieces of quote ``u`` in several contexts together hold ``need`` of its letters."""
        p = u.pattern
        spans: list[tuple[int, int]] = []  # character ranges of the bare canonical quote
        for c in contexts:
            if u.head_min in c:
                spans.append((0, _longest(p, c, len(u.head_min), prefix=True)))
            if u.tail_min in c:
                spans.append((len(p) - _longest(p, c, len(u.tail_min), prefix=False), len(p)))
            cn = c.count(" ") - 1
            if self.min_tokens <= cn < u.n_tokens:
                idx = p.find(c[1:-1])
                if idx >= 0:
                    spans.append((idx, idx + len(c) - 2))
        spans.sort()
        total = 0
        end = 0
        for a, b in spans:
            a = max(a, end)
            if b > a:
                total += b - a - p.count(" ", a, b)
                end = b
        return total >= u.need


def _longest(p: str, c: str, lo: int, *, prefix: bool) -> int:
    """Length of the longest prefix (suffix) of ``p`` that ``c`` holds, knowing it holds the first ``lo`` characters.

    Binary search: a text holding a piece holds every shorter piece at the same end.
    """
    hi = len(p)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if (p[:mid] if prefix else p[len(p) - mid :]) in c:
            lo = mid
        else:
            hi = mid - 1
    return lo
