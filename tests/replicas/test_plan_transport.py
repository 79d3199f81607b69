"""The scale path's topic-count transportation problem (``_transport``) against scipy's linear program.

The rows are two laminar families (topic and (topic, rack) totals; broker totals), so the linear program's
optimum is integral and must equal the min-cost flow's; both are built here from the same seeded inputs, the
program independently (its own rows, HiGHS)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from kassign.replicas.plan._transport import transport


def _program(r, gob, glo, ghi, blo, bhi, cost):
    """min cost @ x over x[t, b] in [0, 1]: row sums r, (t, g) sums in [glo, ghi], column sums in [blo, bhi];
    (value, x) or None."""
    K, n = cost.shape
    G = glo.shape[1]
    t_of = np.repeat(np.arange(K), n)
    b_of = np.tile(np.arange(n), K)
    cols = np.arange(K * n)
    eq = coo_matrix((np.ones(K * n), (t_of, cols)), shape=(K, K * n))
    grp = coo_matrix((np.ones(K * n), (t_of * G + gob[b_of], cols)), shape=(K * G, K * n)).tocsr()
    brk = coo_matrix((np.ones(K * n), (b_of, cols)), shape=(n, K * n)).tocsr()
    from scipy.sparse import vstack
    A_ub = vstack([grp, -grp, brk, -brk])
    b_ub = np.concatenate([ghi.ravel(), -glo.ravel(), bhi, -blo]).astype(float)
    res = linprog(cost.ravel().astype(float), A_ub=A_ub, b_ub=b_ub, A_eq=eq, b_eq=r.astype(float), bounds=(0, 1),
                  method="highs-ds")
    if res.status != 0:
        return None
    return round(res.fun), res.x.reshape(K, n)


def _check(x, r, gob, glo, ghi, blo, bhi):
    K, n = x.shape
    assert set(np.unique(x)) <= {0, 1}
    assert (x.sum(axis=1) == r).all()
    tot = x.sum(axis=0)
    assert ((tot >= blo) & (tot <= bhi)).all()
    for g in range(glo.shape[1]):
        s = x[:, gob == g].sum(axis=1)
        assert ((s >= glo[:, g]) & (s <= ghi[:, g])).all()


def _inputs(seed, K, n, G, tight):
    rng = np.random.default_rng(seed)
    gob = np.arange(n) % G
    r = rng.integers(1, n, size=K)
    gsize = np.bincount(gob, minlength=G)
    # (topic, rack) bounds around an even share, sometimes tight
    share = r[:, None] * gsize[None, :] / n
    glo = np.floor(share).astype(np.int64) - (0 if tight else rng.integers(0, 2, size=(K, G)))
    ghi = np.minimum(np.ceil(share).astype(np.int64) + (0 if tight else rng.integers(0, 2, size=(K, G))), gsize)
    per = r.sum() / n
    blo = np.full(n, int(np.floor(per)) - rng.integers(0, 2), np.int64)
    bhi = np.full(n, int(np.ceil(per)) + rng.integers(0, 2), np.int64)
    cost = rng.integers(0, 2, size=(K, n))
    return r, gob, glo, ghi, blo, bhi, cost


@pytest.mark.parametrize("seed", range(40))
def test_transport_matches_the_linear_program(seed):
    K = 1 + seed % 9
    n = 3 + seed % 11
    G = 1 + seed % 4 if seed % 4 < n else 1
    args = _inputs(seed, K, n, G, tight=seed % 3 == 0)
    x = transport(*args)
    lp = _program(*args)
    if lp is None:
        assert x is None
        return
    assert x is not None
    _check(x, *args[:6])
    assert int((args[6] * x).sum()) == lp[0]


def test_transport_infeasible_and_trivial():
    gob = np.zeros(3, np.int64)
    # 3 units to place but every broker takes at most 0
    assert transport(np.array([3]), gob, np.zeros((1, 1), np.int64), np.array([[3]]), np.zeros(3, np.int64),
                     np.zeros(3, np.int64), np.zeros((1, 3), np.int64)) is None
    # a broker that must take 2 units from one topic (at most one each): none
    assert transport(np.array([1]), gob, np.zeros((1, 1), np.int64), np.array([[1]]), np.array([2, 0, 0]),
                     np.array([2, 1, 1]), np.zeros((1, 3), np.int64)) is None
    # the free broker is chosen
    x = transport(np.array([1]), gob, np.zeros((1, 1), np.int64), np.array([[1]]), np.zeros(3, np.int64),
                  np.ones(3, np.int64), np.array([[1, 0, 1]]))
    assert x.tolist() == [[0, 1, 0]]
