"""The controllers' QP solver gives the same bits wherever its workspace lands (engine/control/_proxsuite.py)."""
import numpy as np

from engine.control._proxsuite import GENERIC, proxqp


def test_the_generic_build_is_loaded():
    import proxsuite
    assert proxsuite._submodule.__name__ == GENERIC


def test_a_warm_started_sequence_replayed_in_fresh_solvers_ends_in_one_answer():
    """Ten QPs solved in turn, each warm-started from the last (as the walking controller does), replayed in 16
    fresh solvers with allocations of other sizes in between so that each solver's workspace lands elsewhere. The
    AVX2 and AVX-512 builds give two answers ~1e-11 apart on this sequence (most seeds); the generic build one."""
    rng = np.random.default_rng(0)
    n, n_eq, n_in = 40, 12, 30
    M = rng.standard_normal((n, n))
    H = M @ M.T / n + 0.1 * np.eye(n)
    A, C = rng.standard_normal((n_eq, n)), rng.standard_normal((n_in, n))
    lo, up = np.full(n_in, -0.5), np.full(n_in, 0.5)
    sequence = [(H + 0.01 * k * np.eye(n), rng.standard_normal(n), A, 0.1 * rng.standard_normal(n_eq), C, lo, up)
                for k in range(10)]
    answers, kept = set(), []
    for _ in range(16):
        kept.append([np.empty(int(size)) for size in rng.integers(1, 4000, 7)])
        qp = proxqp.dense.QP(n, n_eq, n_in)
        qp.settings.eps_abs, qp.settings.eps_rel = 1e-6, 0.0
        xs = []
        for k, problem in enumerate(sequence):
            if k == 0:
                qp.init(*problem)
                qp.solve()
                qp.settings.initial_guess = proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT
            else:
                qp.update(*problem)
                qp.solve()
            assert qp.results.info.status == proxqp.QPSolverOutput.PROXQP_SOLVED
            xs.append(qp.results.x.copy())
        answers.add(np.concatenate(xs).tobytes())
        kept.append(qp)
    assert len(answers) == 1
