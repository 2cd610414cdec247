"""Task-space inverse dynamics as one QP per control step, solved by proxsuite (dense ProxQP).

Unknowns x = (q̈ (nv), f (3 n_c)): joint accelerations and the world-frame forces at the n_c = 4 n_s corners of
the n_s stance soles.  With M q̈ + h = Sᵀτ + J_cᵀ f the equations of motion (h = rnea(q, v, 0) with gravity,
as the caller models it),

    min  Σ_i w_i ‖J_i q̈ + J̇_i v − a_i*‖² + w_f ‖f‖²                     (tasks i: CoM, swing foot, torso, posture)
    s.t. M_b q̈ + h_b = J_c,bᵀ f                                     (the unactuated base rows: Newton–Euler)
         J_s q̈ + J̇_s v = −k_s v_s                                     (stance soles do not move)
         f_z ≥ 0,  |f_x|, |f_y| ≤ (μ/√2) f_z                          (inner pyramid of the Coulomb cone)
         −τ_max ≤ M_a q̈ + h_a − J_c,aᵀ f ≤ τ_max                      (torque limits)

The solver stops at a loose tolerance (1e-6); its forces are then projected on the pyramids (a change of the
order of that tolerance), the base rows made exact by re-solving the base accelerations,
q̈_b = M_bb⁻¹ (J_c,bᵀ f − h_b − M_ba q̈_a), and τ = M_a q̈ + h_a − J_c,aᵀ f, so that M q̈ + h = Sᵀτ + J_cᵀ f
holds to rounding.  Same structure as Del Prete et al., "Prioritized motion-force control of constrained
fully-actuated robots: Task Space Inverse Dynamics", RAS 2015 (weighted rather than prioritised tasks).
"""
from __future__ import annotations

import time

import numpy as np

from engine.control._proxsuite import proxqp

_SOLVED = proxqp.QPSolverOutput.PROXQP_SOLVED
_COLD = proxqp.InitialGuess.NO_INITIAL_GUESS
_WARM = proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT


def corner_jacobians(J6, R, corners):
    """(4·3, nv) Jacobian of the sole corners (world velocity) from the sole frame's (v, w) Jacobian J6
    (local_world_aligned) and its rotation R; corners (4, 3) in the sole frame: v(p + r) = v − r × w, written
    component by component for the four corners at once."""
    r, (wx, wy, wz) = corners @ R.T, J6[3:]
    J = np.empty((len(corners), 3, J6.shape[1]))
    J[:] = J6[:3]
    J[:, 0] -= r[:, 1:2] * wz - r[:, 2:3] * wy
    J[:, 1] -= r[:, 2:3] * wx - r[:, 0:1] * wz
    J[:, 2] -= r[:, 0:1] * wy - r[:, 1:2] * wx
    return J.reshape(-1, J6.shape[1])


def friction_rows(n_corners, mu):
    """(5 n_c, 3 n_c) C with C f ≥ 0 the linearised cone: f_z ≥ 0 and μ' f_z ∓ f_x, μ' f_z ∓ f_y ≥ 0."""
    m = mu / np.sqrt(2.0)
    block = np.array([[0, 0, 1], [-1, 0, m], [1, 0, m], [0, -1, m], [0, 1, m]], float)
    return np.kron(np.eye(n_corners), block)


class TaskQP:
    """The QP of one contact mode (a fixed number of stance soles), warm-started from its last solution (and
    solved once more from a cold start when the warm start stalls)."""

    def __init__(self, nv, n_stance, actuated, tau_max, mu, eps=1e-6, slack=0.0):
        self.nv, self.nf = nv, 12 * n_stance
        self.ns = 6 * n_stance if slack > 0 else 0                    # slack on the stance rows (flexible soles)
        self.slack = slack
        self.act, self.base = np.flatnonzero(actuated), np.flatnonzero(~actuated)
        # the limits less 0.1 %: room for the clean-up below, which moves τ by about the solver's tolerance
        self.tau_max, self.cone = 0.999 * tau_max[self.act], friction_rows(4 * n_stance, mu)
        self.mu_pyramid = mu / np.sqrt(2.0)
        n, n_eq = nv + self.nf + self.ns, len(self.base) + 6 * n_stance
        self.n_in = self.cone.shape[0] + len(self.act)
        self._buffers(n, n_eq)
        self.qp = proxqp.dense.QP(n, n_eq, self.n_in)
        self.qp.settings.eps_abs, self.qp.settings.eps_rel = eps, 0.0
        self.qp.settings.max_iter = 200
        # cold start first (a warm start before any result starts from whatever the workspace holds: runs then
        # differ at the solver's tolerance), then from the previous solution
        self.qp.settings.initial_guess = _COLD
        self.started, self.seconds, self.calls = False, 0.0, 0        # time in proxsuite (init/update + solve)

    def _buffers(self, n, n_eq):
        """The QP's matrices, their constant blocks written once: the force regularisation, the slacks, the cones
        and the zeros; ``solve`` writes the blocks that change with the state."""
        nv, nf, ns, nb, nc = self.nv, self.nf, self.ns, len(self.base), self.cone.shape[0]
        self.H, self.g = np.zeros((n, n)), np.zeros(n)
        self.H[nv:nv + nf, nv:nv + nf] = 1e-6 * np.eye(nf)
        self.H[nv + nf:, nv + nf:] = self.slack * np.eye(ns)
        self.A, self.b = np.zeros((n_eq, n)), np.zeros(n_eq)          # base rows, then stance rows
        self.A[nb:, nv + nf:] = -np.eye(n_eq - nb)[:, :ns]
        self.C, self.lo, self.up = np.zeros((self.n_in, n)), np.zeros(self.n_in), np.full(self.n_in, 1e20)
        self.C[:nc, nv:nv + nf] = self.cone                             # cones, then torque limits
        self.base_base, self.base_act = np.ix_(self.base, self.base), np.ix_(self.base, self.act)

    def solve(self, M, h, Jc, Js, dJs_v, ks_vs, H, g):
        """(q̈, f, τ) or None if the QP is not solved.  Jc (3 n_c, nv) corners, Js (6 n_s, nv) soles with
        their drift dJs_v; H, g the cost on q̈ only (the force regularisation is added here)."""
        nv, nf, nb, nc = self.nv, self.nf, len(self.base), self.cone.shape[0]
        self.H[:nv, :nv], self.g[:nv] = H, g
        self.A[:nb, :nv], self.A[:nb, nv:nv + nf], self.b[:nb] = M[self.base], -Jc[:, self.base].T, -h[self.base]
        self.A[nb:, :nv], self.b[nb:] = Js, -dJs_v - ks_vs
        self.C[nc:, :nv], self.C[nc:, nv:nv + nf] = M[self.act], -Jc[:, self.act].T
        self.lo[nc:], self.up[nc:] = -self.tau_max - h[self.act], self.tau_max - h[self.act]
        start = time.perf_counter()
        if self.started:
            self.qp.update(self.H, self.g, self.A, self.b, self.C, self.lo, self.up)
            self.qp.solve()
            if self.qp.results.info.status != _SOLVED:     # a warm start can stall (seen on the flexible-ankle
                self.qp.settings.initial_guess = _COLD      # walk: max_iter at a residual of 0.2 where a cold
                self.qp.solve()                             # start solves in 32 iterations); once more, cold
                self.qp.settings.initial_guess = _WARM
        else:
            self.qp.init(self.H, self.g, self.A, self.b, self.C, self.lo, self.up)
            self.qp.solve()
            self.qp.settings.initial_guess = _WARM
            self.started = True
        self.seconds += time.perf_counter() - start
        self.calls += 1
        x = self.qp.results.x
        if self.qp.results.info.status != _SOLVED or not np.all(np.isfinite(x)):
            return None
        qdd, f = x[:nv].copy(), x[nv:nv + nf].copy()
        F = f.reshape(-1, 3)                               # a view: the projection writes into f
        F[:, 2] = np.maximum(F[:, 2], 0.0)
        F[:, :2] = np.minimum(np.maximum(F[:, :2], -self.mu_pyramid * F[:, 2:]), self.mu_pyramid * F[:, 2:])
        b_, a_ = self.base, self.act
        qdd[b_] = np.linalg.solve(M[self.base_base], Jc[:, b_].T @ f - h[b_] - M[self.base_act] @ qdd[a_])
        tau = np.zeros(nv)
        tau[self.act] = M[self.act] @ qdd + h[self.act] - Jc[:, self.act].T @ f
        return qdd, f, tau
