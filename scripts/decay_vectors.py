#!/usr/bin/env python3
"""Write lib/consensus/testdata/decay_vectors.json: test vectors for concentration decay.

This is an implementation of docs/protocol.md section 8 independent of lib/consensus/decay.go, in
Python's exact integers (no 64- or 128-bit limits to get wrong the same way twice).
lib/consensus/decay_test.go checks every case against the Go functions.

Run from the repository root:  python3 scripts/decay_vectors.py
The output is deterministic (fixed seed, sorted keys), so rerunning it must give no diff.

Each case: value (nominal, subunits), created and spent (heights h0 and h), cluster_balance and
supply (subunits, both before the spending block), tier ("" for a non-agent), score (the
agent's conduct score, null for a non-agent), concentration_ppb, rate (parts per 10^12 per
block), effective (subunits), and note (why the case is there).
"""

import json
import os
import random
import re

T = 1_000_000  # threshold, ppb
S = 10_000_000  # scale, ppb
R_MAX = 309_000  # parts per 10^12 per block
ONE = 10**12
PPB = 10**9
U64 = 2**64 - 1
BLOCKS_PER_YEAR = 525_960

# protocol §9: (name, lowest score, decay multiplier out of 10,000), lowest tier first.
TIERS = [
    ("observer", 0, 30_000),
    ("participant", 350, 15_000),
    ("contributor", 550, 10_000),
    ("trusted", 700, 7_500),
    ("exemplary", 900, 5_000),
]
MULTIPLIER = {name: m for name, _, m in TIERS}
MULTIPLIER[""] = 10_000


def read_max_money(root):
    """amount.MaxMoney from lib/amount/amount.go, so the vectors follow the Go constant."""
    with open(os.path.join(root, "lib", "amount", "amount.go"), encoding="utf-8") as f:
        src = f.read()
    coin = int(re.search(r"\bCoin\s+uint64\s*=\s*([0-9_]+)", src).group(1).replace("_", ""))
    m = re.search(r"\bMaxMoney\s+uint64\s*=\s*([0-9_]+)\s*\*\s*Coin\b", src)
    return int(m.group(1).replace("_", "")) * coin


def tier_of(score):
    tier = TIERS[0][0]
    for name, lowest, _ in TIERS:
        if score >= lowest:
            tier = name
    return tier


def concentration(balance, supply):
    if supply == 0:
        return 0
    return min(balance * PPB // supply, PPB)


def rate(c, tier):
    if c <= T:
        return 0
    d = min(c, PPB) - T
    base = R_MAX * d // (d + S)
    # The cap is part of the rule but cannot bind: base < R_MAX and the largest multiplier is
    # 30,000, so base * multiplier // 10,000 < 3 * R_MAX = 927,000, far below 10^12. No case
    # can reach it through DecayRate; the Go unit tests give EffectiveValue a rate of 10^12.
    return min(base * MULTIPLIER[tier] // 10_000, ONE)


def effective(v, r, n):
    """protocol §8's pseudo-code, literally."""
    f = ONE - min(r, ONE)
    acc = ONE
    while n > 0:
        if n & 1:
            acc = acc * f // ONE
        f = f * f // ONE
        n >>= 1
    return v * acc // ONE


def case(note, value, created, spent, balance, supply, score=None, tier=None):
    if tier is None:
        tier = "" if score is None else tier_of(score)
    c = concentration(balance, supply)
    r = rate(c, tier)
    eff = effective(value, r, spent - created)
    assert 0 <= eff <= value
    return {
        "note": note,
        "value": value,
        "created": created,
        "spent": spent,
        "cluster_balance": balance,
        "supply": supply,
        "tier": tier,
        "score": score,
        "concentration_ppb": c,
        "rate": r,
        "effective": eff,
    }


def balance_for(ppb, supply):
    """The smallest balance whose concentration is at least ppb."""
    return -(-ppb * supply // PPB)


def vectors(max_money):
    coin = 100_000_000
    supply = 10_000_000 * coin
    cases = []
    add = cases.append

    # Threshold: c == T has rate 0; one subunit more keeps c == T when the supply is above
    # 10^9 subunits; c == T+32 still rounds to rate 0, c == T+33 is the first rate of 1.
    at = supply // 1000
    add(case("c exactly at the threshold: rate 0", 1000 * coin, 100, 1100, at, supply))
    add(case("one subunit above the threshold balance: c still T", 1000 * coin, 100, 1100, at + 1, supply))
    small = 1_000_000_000  # supply of 10^9 subunits: one subunit is one ppb
    add(case("c = T + 1: rate rounds to 0", 10**6, 0, 10**6, T + 1, small))
    add(case("c = T + 32: last rate of 0", 10**6, 0, 10**6, T + 32, small))
    add(case("c = T + 33: first rate of 1", 10**6, 0, 10**6, T + 33, small))
    add(case("c = T + 33, observer: rate 3", 10**6, 0, 10**6, T + 33, small, score=0))
    add(case("c = T - 1: below the threshold", 10**6, 0, 10**6, T - 1, small))

    # d == S: half of R_MAX at 1.1%.
    add(case("c = 1.1%: half of R_MAX", 500 * coin, 0, BLOCKS_PER_YEAR, balance_for(T + S, supply), supply))

    # The largest rates. The 10^12 cap cannot be reached (see rate()); the observer at the
    # whole supply has the largest rate there is.
    add(case("balance = supply, observer: the largest rate", 1000 * coin, 0, BLOCKS_PER_YEAR, supply, supply, score=0))
    add(case("balance = supply, non-agent", 1000 * coin, 0, BLOCKS_PER_YEAR, supply, supply))
    add(case("balance above supply: c capped at 10^9", 1000 * coin, 0, 1000, supply + 1, supply, score=100))
    add(case("balance = supply - 1", 1000 * coin, 0, 1000, supply - 1, supply))

    # Block counts.
    add(case("0 blocks: no decay", 1000 * coin, 500, 500, supply // 2, supply))
    add(case("1 block", 1000 * coin, 500, 501, supply // 2, supply))
    add(case("a million blocks", 1000 * coin, 7, 1_000_007, supply // 10, supply))
    add(case("a million blocks, observer at 50%", 1000 * coin, 7, 1_000_007, supply // 2, supply, score=10))
    add(case("one year", 1000 * coin, 0, BLOCKS_PER_YEAR, supply // 20, supply))
    add(case("five years", 1000 * coin, 0, 5 * BLOCKS_PER_YEAR, supply // 20, supply))
    add(case("2^32 blocks", 1000 * coin, 0, 2**32, supply // 20, supply, score=1000))
    add(case("2^40 - 1 blocks, smallest non-zero rate", 1000 * coin, 0, 2**40 - 1, T + 33, small))
    add(case("2^63 blocks", max_money, 0, 2**63, max_money // 1000 + max_money // 100, max_money))

    # Values near the cap (and beyond it, for the 128-bit product).
    for v in (max_money, max_money - 1, max_money // 2 + 1):
        add(case("value near MaxMoney", v, 1, 1 + BLOCKS_PER_YEAR, max_money, max_money))
        add(case("value near MaxMoney, exemplary", v, 1, 1 + 12345, v, max_money, score=950))
    add(case("value 2^64 - 1 (above MaxMoney): 128-bit product", U64, 0, 1000, max_money // 3, max_money))
    add(case("value 1 subunit: rounds to 0", 1, 0, 1, supply // 2, supply))
    add(case("value 0", 0, 0, 1000, supply // 2, supply))
    add(case("supply MaxMoney, balance 1%", max_money // 100, 0, 1440, max_money // 100, max_money))

    # Supply 0.
    add(case("supply 0, balance 0: c 0", 1000, 0, 1000, 0, 0))
    add(case("supply 0, balance > 0: c 0", 1000, 0, 1000, 1000, 0, score=0))
    add(case("supply 1, balance 1", 1, 0, 10, 1, 1))

    # Each tier, at the edges of its score range, and the non-agent.
    for score in (0, 349, 350, 549, 550, 699, 700, 899, 900, 1000, 1001, 2**32 - 1):
        add(case(f"score {score}", 250 * coin, 1000, 1000 + 43_830, supply // 25, supply, score=score))
    add(case("non-agent at 4%", 250 * coin, 1000, 1000 + 43_830, supply // 25, supply))

    # Random cases from a fixed seed.
    rng = random.Random(20240801)
    for i in range(400):
        kind = i % 4
        sup = rng.choice([rng.randrange(1, max_money + 1), max_money, rng.randrange(1, 10**12)])
        if kind == 0:  # anywhere
            bal = rng.randrange(0, sup + 1)
        elif kind == 1:  # near the threshold
            bal = max(0, balance_for(T, sup) + rng.randrange(-1000, 1000))
        elif kind == 2:  # concentrated
            bal = rng.randrange(sup // 100, sup + 1)
        else:  # a little above the threshold
            bal = min(sup, balance_for(T + rng.randrange(0, 2 * S), sup))
        value = rng.randrange(0, max(bal, 1) + 1) if rng.random() < 0.8 else rng.randrange(0, U64 + 1)
        created = rng.randrange(0, 10**7)
        blocks = rng.choice([rng.randrange(0, 1441), rng.randrange(0, 10 * BLOCKS_PER_YEAR), rng.randrange(0, 2**40)])
        score = None if rng.random() < 0.4 else rng.randrange(0, 1001)
        add(case(f"random {i}", value, created, created + blocks, bal, sup, score=score))
    return cases


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    max_money = read_max_money(root)
    assert max_money == 21_000_000 * 100_000_000
    cases = vectors(max_money)
    out = os.path.join(root, "lib", "consensus", "testdata", "decay_vectors.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write("[\n")
        f.write(",\n".join("  " + json.dumps(c, sort_keys=True) for c in cases))
        f.write("\n]\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(out, root)}")


if __name__ == "__main__":
    main()
