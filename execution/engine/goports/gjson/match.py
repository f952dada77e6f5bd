"""Wildcard matching for keys and ``%`` queries (``github.com/tidwall/match`` v1.1.1 ``MatchLimit``),
on an explicit stack instead of one Go call per star tried."""

from __future__ import annotations

from typing import Final

from execution.engine.goports.gjson.scan import _BACKSLASH, _decode_last_rune, _decode_rune

# gjson's ``matchLimit`` passes this complexity budget to ``match.MatchLimit`` (gjson.go).
_MATCH_LIMIT: Final = 10000

# --------------------------------------------------------------------------------------------
# Wildcard matching (github.com/tidwall/match v1.1.1 MatchLimit), iterative
# --------------------------------------------------------------------------------------------


def _match_limit(s: bytes, pat: bytes) -> bool:
    """``match.MatchLimit(s, pat, 10000)``'s match flag (False when the budget runs out).

    match's recursion (one call per star tried) runs here on an explicit stack of frames
    ``[s_start, s_end, p_start, p_end]``.
    """
    if pat == b"*":
        return True
    counter = 0
    stack: list[list[int]] = []
    frame = [0, len(s), 0, len(pat)]
    while True:
        if counter > _MATCH_LIMIT:
            return False  # gjson reads "stopped" as no match
        counter += 1
        result = _match_run(s, pat, frame)
        while True:
            if result is None:
                # The frame waits at a star: try the rest of the pattern on the string first.
                stack.append(frame)
                frame = [frame[0], frame[1], frame[2] + 1, frame[3]]
                break
            if not stack:
                return result == 1
            parent = stack.pop()
            if result != 0:
                continue
            if parent[0] == parent[1]:
                continue
            _r, size = _decode_rune(s, parent[0], parent[1])
            parent[0] += size
            frame = parent
            result = _match_run(s, pat, frame)


def _match_run(s: bytes, pat: bytes, frame: list[int]) -> int | None:
    """Run one match frame: 0 no match, 1 match, None when it stops at a star (state saved)."""
    ss, se, ps, pe = frame
    while ps < pe:
        pc, psz = _decode_rune(pat, ps, pe)
        if ss < se:
            sc, ssz = _decode_rune(s, ss, se)
        else:
            sc, ssz = 0, 0
        if pc == 0x3F:  # '?'
            if ssz == 0:
                return 0
        elif pc == 0x2A:  # '*'
            while pe - ps > 1 and pat[ps + 1] == 0x2A:
                ps += 1
            if pe - ps == 1:
                return 1
            se, pe, ok = _match_trim_suffix(s, ss, se, pat, ps, pe)
            if not ok:
                return 0
            if pe - ps == 1:
                return 1
            frame[0], frame[1], frame[2], frame[3] = ss, se, ps, pe
            return None
        else:
            if ssz == 0:
                return 0
            if pc == _BACKSLASH:
                ps += psz
                if ps >= pe:
                    return 0
                pc, psz = _decode_rune(pat, ps, pe)
            if sc != pc:
                return 0
        ss += ssz
        ps += psz
    return 1 if ss == se else 0


def _match_trim_suffix(s: bytes, ss: int, se: int, pat: bytes, ps: int, pe: int) -> tuple[int, int, bool]:
    ok = True
    while se > ss and pe - ps > 1:
        pc, psz = _decode_last_rune(pat, ps, pe)
        esc = False
        k = 0
        while True:
            if pat[pe - psz - k - 1] != _BACKSLASH:
                if k & 1:
                    esc = True
                    psz += 1
                break
            k += 1
        if pc == 0x2A and not esc:
            ok = True
            break
        sc, ssz = _decode_last_rune(s, ss, se)
        if not ((pc == 0x3F and not esc) or pc == sc):
            ok = False
            break
        se -= ssz
        pe -= psz
    return se, pe, ok
