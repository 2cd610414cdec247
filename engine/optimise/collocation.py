"""Direct collocation of an optimal-control problem over Articula's dynamics, solved by IPOPT through CasADi
(seed 003 §5.F; seed 000 §4's weightlifting used IPOPT too).

Transcription (trapezoidal, Betts 2010 §4.5; Kelly 2017 §3): nodes t_k = k h, h = T/N, k = 0..N carry
q_k, v_k, a_k, the controls u_k, the closure forces λ_k and the contact forces F_k.  Constraints:

    q_{k+1} − q_k = h/2 (v_k + v_{k+1}) + G(q_{k+1})ᵀ γ_k,  v_{k+1} − v_k = h/2 (a_k + a_{k+1})   (defects)
    rnea(q_k, v_k, a_k, f_ext(λ_k, F_k, u_k)) = S_u u_k                             (seed 003 I.7a, implicit)
    g(q_k) = 0, G(q_k) v_k = 0, G = ∂g/∂q (point closures and contacts: the anchors coincide)  (I.7b, I.31)
    F_z ≥ F_min,  |F_t| ≤ μ F_z                                                      (I.34, II.34-II.35)
    |u| ≤ τ_M,  |q̇/q̇_M + u/τ_M| ≤ 1                                                 (seed 000 5.25-5.26)

The closure rows hold at both the position and the velocity level; the trapezoid's chord cannot keep both
(it leaves the constraint manifold at second order), so it gets the correction G(q_{k+1})ᵀ γ_k, γ_k free (Posa,
Cantu & Tedrake 2016, IJRR 35(1)).  Without it, the position rows alone leave the velocities a free odd-even
mode (only v_k + v_{k+1} is constrained) that IPOPT used to fake the closure forces on RABBIT.

Chessé's cut forces are controls (I.17-I.18), here λ and F; closure is an equality constraint instead of his
exterior penalty ½ r_d |O5O5′|², which IPOPT enforces to its tolerance.  The dynamics are written implicitly,
through inverse dynamics (rnea, exported to CasADi: ``symbolic.py``), so no mass matrix is ever inverted.
Cost (II.5-II.6): ½ μ_c ∫ Σ ξ (γ u)² + ½ μ_f ∫ Σ (λ² + F²) + μ_e ∫ Σ √(p² + ε²), p = q̇ u the power of each
actuator (the absolute value smoothed by ε); quadrature by the same trapezoid.  Optionally ½ μ_d ∫ Σ ξ (γ u̇)² +
Σ λ̇² dt (II.5's J_d): the defects hold a_k + a_{k+1} only, so a_k + (−1)^k δ, with u and λ alternating along,
moves no q or v; this cost removes that zig-zag (an optimum rode it on the friction cone's edge).
Reported: J_e = ∫ Σ |q̇ u| dt (exact |.|, trapezoid over the nodes), the thesis' energy.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from engine.dynamics.integrators import random_configuration
from engine.model.model import JointType
from engine.optimise import symbolic

PLAIN_STATUS = {
    "Solve_Succeeded": "solved: optimal to the requested tolerance",
    "Solved_To_Acceptable_Level": "solved to an acceptable level only (not the requested tolerance)",
    "Infeasible_Problem_Detected": "infeasible: no trajectory satisfies every constraint (the start, end, "
                                   "closures and limits contradict each other)",
    "Maximum_Iterations_Exceeded": "not converged: stopped at the iteration limit",
    "Maximum_CpuTime_Exceeded": "not converged: stopped at the time limit",
    "Restoration_Failed": "not converged: could not get back to a feasible point (restoration failed)",
    "Search_Direction_Becomes_Too_Small": "not converged: the steps became too small to make progress",
    "Diverging_Iterates": "diverged: the iterates grew without bound",
    "Not_Enough_Degrees_Of_Freedom": "over-constrained: more equality constraints than unknowns",
    "Invalid_Number_Detected": "failed: a non-finite value in the dynamics or the cost",
    "Error_In_Step_Computation": "failed: the linear solver could not compute a step",
}
SOLVED = ("Solve_Succeeded", "Solved_To_Acceptable_Level")
CONE_EPS = 1e-6    # N: keeps the 3D cone's norm differentiable at F_t = 0
GIVEN_GAP, GIVEN_SPEED = 1e-4, 1e-3   # m, m/s: a given boundary state this close to its closures makes them redundant


@dataclass
class Result:
    """The optimal (or last) trajectory: t (N+1,), q (N+1, nq), v, a, tau (N+1, nv) — tau the generalised
    actuator forces S_u u + Jᵀ(closure torques), what a playback applies — u (N+1, nu) the controls,
    forces (N+1, n_forces), and the figures of the solve."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    u: np.ndarray
    forces: np.ndarray
    joint_names: tuple
    actuator_names: tuple
    energy: float                 # J_e = ∫ Σ |q̇ u| dt, J
    effort: float                 # ½ ∫ Σ ξ (γ u)² dt
    closure_residual: float       # max |g(q_k)|, m
    status: str                   # IPOPT's return status
    iterations: int
    evaluations: dict             # IPOPT's counts of f, g, ∇f, ∂g, ∇²L evaluations
    wall_time: float              # s, transcription included
    meta: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.status in SOLVED

    @property
    def status_words(self) -> str:
        return PLAIN_STATUS.get(self.status, self.status.replace("_", " ").lower())


@dataclass(frozen=True)
class Anchor:
    """A point constraint row set: ``body_a``'s point ``p_a`` on ``body_b``'s ``p_b`` (base frame when b = −1),
    carrying a force (+ on a, − on b); ``rows``: the components that move (planar models keep 2 of 3)."""
    name: str
    body_a: int
    p_a: np.ndarray
    body_b: int
    p_b: np.ndarray
    rows: tuple
    mu: float | None = None          # a unilateral contact on the ground (normal +z): its cone
    min_normal: float = 0.0


def dof_index(model, problem, name, key):
    """The dof index of the 1-dof joint ``name`` (problem key ``key`` for the error)."""
    for j in model.joints:
        if j.name == name:
            if j.nq != 1:
                raise problem.error(f"joint '{name}' has {j.nq} coordinates; only 1-dof joints can be named", key)
            return j.idx_v
    raise problem.error(f"no joint '{name}' in model '{model.name}'", key, name)


def _moving_rows(model, body_a, p_a, body_b, p_b, rng):
    """The components of g(q) = x_a(q) − x_b(q) that depend on q (a planar model's normal row does not)."""
    q = ca.SX.sym("q", model.nq)
    J = ca.Function("J", [q], [ca.jacobian(symbolic.point_position(model, q, body_a, p_a)
                                            - symbolic.point_position(model, q, body_b, p_b), q)])
    norms = sum(np.abs(np.asarray(J(random_configuration(model, rng)))).sum(axis=1) for _ in range(3))
    return tuple(int(r) for r in np.flatnonzero(norms > 1e-12))


def anchors(model, problem, q_start):
    """The point closures of the model, then the problem's contacts (fixed where they start, or ``at``)."""
    rng, out = np.random.default_rng(0), []
    for c in model.closures:
        if c.kind != "point":
            raise problem.error(f"closure '{c.name}' is a {c.kind}: the optimiser handles point closures",
                                "multibody", c.kind)
        out.append(Anchor(c.name, c.body_a, c.p_a, c.body_b, c.p_b,
                          _moving_rows(model, c.body_a, c.p_a, c.body_b, c.p_b, rng)))
    for i, spec in enumerate(problem.contacts):
        f = _frame(problem, model, spec["frame"], f"contact.{i}.frame")
        body, point = int(model.frame_body[f]), np.asarray(model.frame_p[f], float)
        at = spec.get("at")
        if at is None:
            if q_start is None:
                raise problem.error("a contact without 'at' needs a fully given [start.q]", f"contact.{i}")
            at = np.asarray(symbolic.point_position(model, q_start, body, point)).ravel()
        out.append(Anchor(spec["frame"], body, point, -1, np.asarray(at, float),
                          _moving_rows(model, body, point, -1, np.zeros(3), rng),
                          float(spec.get("mu", 1.0)), float(spec.get("min_normal", 0.0))))
    return out


def _closure_of(model, problem, actuator):
    for c in model.closures:
        if c.name == actuator.name:
            return c
    raise problem.error(f"'{actuator.name}' is neither a 1-dof joint nor a closure of '{model.name}'",
                        f"actuators.{actuator.name}", actuator.name)


def dynamics_functions(model, problem, anchor_list, gravity):
    """CasADi functions of one node: the dynamics residual, the closure gaps, the actuators' powers and the
    generalised actuator forces.  Joint actuators enter as S_u u; closure torques and forces as f_ext."""
    q, v, a = ca.SX.sym("q", model.nq), ca.SX.sym("v", model.nv), ca.SX.sym("a", model.nv)
    u = ca.SX.sym("u", len(problem.actuators))
    nf = sum(len(an.rows) for an in anchor_list)
    lam = ca.SX.sym("lam", nf)
    wrench = [ca.SX.zeros(6) for _ in range(model.nbodies)]
    gaps, k = [], 0
    for an in anchor_list:                      # +F on a at p_a, −F on b at p_b (base frame)
        F = ca.SX.zeros(3)
        for r in an.rows:
            F[r] = lam[k]
            k += 1
        for body, p, sign in ((an.body_a, an.p_a, 1.0), (an.body_b, an.p_b, -1.0)):
            if body >= 0:
                wrench[body] += symbolic.point_wrench(model, q, body, p, sign * F)
        gap = (symbolic.point_position(model, q, an.body_a, an.p_a)
               - symbolic.point_position(model, q, an.body_b, an.p_b))
        gaps += [gap[r] for r in an.rows]
    constraint_wrench = list(wrench)            # the closure and contact forces alone (for tau)
    powers, S_u = [None] * len(problem.actuators), ca.SX.zeros(model.nv)
    for i, act in enumerate(problem.actuators):
        if act.axis is None:
            dof = dof_index(model, problem, act.name, f"actuators.{act.name}")
            S_u[dof] += u[i]
            powers[i] = v[dof] * u[i]
        else:
            c, axis = _closure_of(model, problem, act), ca.DM(act.axis)
            for body, sign in ((c.body_a, 1.0), (c.body_b, -1.0)):
                if body >= 0:
                    wrench[body] += symbolic.point_wrench(model, q, body, np.zeros(3), ca.SX.zeros(3),
                                                          sign * axis * u[i])
            w_rel = symbolic.angular_velocity(model, q, v, c.body_a) - symbolic.angular_velocity(model, q, v, c.body_b)
            powers[i] = ca.dot(w_rel, axis) * u[i]
    residual = symbolic.rnea(model, q, v, a, wrench, gravity, problem.friction_speed) - S_u
    tau = symbolic.rnea(model, q, v, a, constraint_wrench, gravity, problem.friction_speed)
    args, names = [q, v, a, u, lam], ["q", "v", "a", "u", "lam"]
    return (ca.Function("residual", args, [residual], names, ["r"]),
            ca.Function("gaps", [q], [ca.vertcat(*gaps)], ["q"], ["g"]),
            ca.Function("powers", [q, v, u], [ca.vertcat(*powers)], ["q", "v", "u"], ["p"]),
            ca.Function("tau", args, [tau], names, ["tau"]), nf)


def _full(model, values, key_of, problem):
    """{dof: value} of a {joint: value} table."""
    return {dof_index(model, problem, name, f"{key_of}.{name}"): float(x) for name, x in values.items()}


def solve(model, problem, q_scene=None, gravity=(0.0, 0.0, -9.81), verbose=False) -> Result:
    """Transcribe ``problem`` on ``model`` (the multibody's base frame; ``gravity`` in it) and solve it."""
    t0 = time.perf_counter()
    if model.nq != model.nv or any(t in (JointType.SPHERICAL, JointType.FREE, JointType.PLANAR)
                                   for t in model.joint_type):
        raise problem.error("the optimiser handles revolute and prismatic joints only (q and v alike)",
                            "multibody", model.name)
    N, T, nv = problem.intervals, problem.duration, model.nv
    h, gravity = T / N, np.asarray(gravity, float)
    start_q, end_q = _full(model, problem.start_q, "start.q", problem), _full(model, problem.end_q, "end.q", problem)
    start_v, end_v = _full(model, problem.start_v, "start.v", problem), _full(model, problem.end_v, "end.v", problem)
    q0 = np.array(q_scene if q_scene is not None else np.zeros(nv), float)
    q_start = np.array([start_q.get(k, q0[k]) for k in range(nv)]) if len(start_q) == nv else None
    anchor_list = anchors(model, problem, q_start)
    residual, gaps, powers, tau_f, nf = dynamics_functions(model, problem, anchor_list, gravity)
    nu = len(problem.actuators)

    opti = ca.Opti()
    Q, V, A = opti.variable(nv, N + 1), opti.variable(nv, N + 1), opti.variable(nv, N + 1)
    U = opti.variable(nu, N + 1)
    Lam = opti.variable(nf, N + 1) if nf else ca.MX.zeros(0, N + 1)        # closure and contact forces
    defect_q = Q[:, 1:] - Q[:, :-1] - h / 2 * (V[:, :-1] + V[:, 1:])              # trapezoidal defects
    opti.subject_to(V[:, 1:] - V[:, :-1] == h / 2 * (A[:, :-1] + A[:, 1:]))
    opti.subject_to(ca.vec(residual.map(N + 1)(Q, V, A, U, Lam)) == 0)           # inverse dynamics = S_u u
    if nf:                                    # closures and contacts: g(q_k) = 0 and G(q_k) v_k = 0
        G = gap_jacobian(model, gaps)
        Gam = opti.variable(nf, N)            # the chord leaves the manifold: + G(q_{k+1})ᵀ γ_k (Posa 2016)
        defect_q -= ca.horzcat(*[G(Q[:, k + 1]).T @ Gam[:, k] for k in range(N)])
        for k in _constrained_nodes(model, gaps, G, N, (start_q, start_v), (end_q, end_v)):
            opti.subject_to(gaps(Q[:, k]) == 0)
            opti.subject_to(G(Q[:, k]) @ V[:, k] == 0)
    opti.subject_to(defect_q == 0)
    _limits(opti, model, problem, Q, V, U, Lam, anchor_list)
    _boundary(opti, model, problem, Q, V, start_q, end_q, start_v, end_v)
    P = powers.map(N + 1)(Q, V, U)
    w = np.full(N + 1, h)
    w[[0, -1]] = h / 2                                                            # trapezoidal quadrature
    xi = np.array([a.weight for a in problem.actuators])[:, None]
    gamma = np.array([a.scale for a in problem.actuators])[:, None]
    effort = 0.5 * ca.sum2(ca.sum1(xi * (gamma * U) ** 2) * w[None, :])
    cost = problem.effort * effort
    if nf:
        cost += problem.force * 0.5 * ca.sum2(ca.sum1(Lam ** 2) * w[None, :])
    if problem.rate:              # ½ μ_d ∫ Σ ξ (γ u̇)² + Σ λ̇² dt, u̇ = (u_{k+1} − u_k)/h
        rates = ca.sum1(xi * (gamma * ca.diff(U, 1, 1)) ** 2) + ca.sum1(ca.diff(Lam, 1, 1) ** 2)
        cost += problem.rate * 0.5 / h * ca.sum2(rates)
    if problem.energy:
        cost += problem.energy * ca.sum2(ca.sum1(ca.sqrt(P ** 2 + problem.energy_smoothing ** 2)) * w[None, :])
    opti.minimize(cost)
    _guess(opti, model, problem, Q, V, Lam, q0, start_q, end_q, anchor_list, nf)
    opti.solver("ipopt", {"print_time": False},
                {"max_iter": problem.max_iterations, "tol": problem.tolerance, "print_level": 5 if verbose else 0,
                 "sb": "yes", "mu_strategy": "adaptive"})
    try:
        value = opti.solve().value
    except RuntimeError:                         # not converged: keep the last iterate
        value = opti.debug.value
    stats = opti.stats()
    q, v, a, u = (np.asarray(value(X), float).reshape(-1, N + 1).T for X in (Q, V, A, U))
    lam = np.asarray(value(Lam), float).reshape(nf, N + 1).T if nf else np.zeros((N + 1, 0))
    tau = np.array([np.asarray(tau_f(q[k], v[k], a[k], u[k], lam[k])).ravel() for k in range(N + 1)])
    p = np.array([np.asarray(powers(q[k], v[k], u[k])).ravel() for k in range(N + 1)])
    g = np.array([np.asarray(gaps(q[k])).ravel() for k in range(N + 1)]) if nf else np.zeros((N + 1, 0))
    counts = {k[len("n_call_"):]: int(v_) for k, v_ in stats.items() if k.startswith("n_call_nlp")}
    return Result(t=np.linspace(0.0, T, N + 1), q=q, v=v, a=a, tau=tau, u=u, forces=lam,
                  joint_names=tuple(_dof_names(model)), actuator_names=tuple(a_.name for a_ in problem.actuators),
                  energy=float(w @ np.abs(p).sum(axis=1)),
                  effort=float(w @ (0.5 * ((gamma.T * u) ** 2 * xi.T).sum(axis=1))),
                  closure_residual=float(np.abs(g).max()) if g.size else 0.0,
                  status=str(stats.get("return_status", "unknown")), iterations=int(stats.get("iter_count", 0)),
                  evaluations=counts, wall_time=time.perf_counter() - t0,
                  meta={"anchors": [an.name for an in anchor_list], "power": p})


def gap_jacobian(model, gaps):
    """G(q) = ∂g/∂q, the closure and contact rows at the velocity level (nq = nv here)."""
    q = ca.SX.sym("q", model.nq)
    return ca.Function("G", [q], [ca.jacobian(gaps(q), q)], ["q"], ["G"])


def _constrained_nodes(model, gaps, G, N, start, end):
    """The nodes whose closure and contact rows are constraints.  A boundary node whose q and v are given in
    full and satisfy the rows to the data's precision (GIVEN_GAP, GIVEN_SPEED) is left out: its rows would repeat
    the boundary equalities (a singular Jacobian for IPOPT, an infeasible one when the data are rounded).
    A given state that breaks them keeps them, and the solver reports the contradiction."""
    nodes = list(range(N + 1))
    for node, (given_q, given_v) in ((0, start), (N, end)):
        if len(given_q) == len(given_v) == model.nv:
            q = np.array([given_q[k] for k in range(model.nv)])
            v = np.array([given_v[k] for k in range(model.nv)])
            if np.abs(gaps(q).full()).max() <= GIVEN_GAP and np.abs(G(q).full() @ v).max() <= GIVEN_SPEED:
                nodes.remove(node)
    return nodes


def _dof_names(model):
    return [model.joint_name[int(model.dof_joint[k])] for k in range(model.nv)]


def _limits(opti, model, problem, Q, V, U, Lam, anchor_list):
    """Joint ranges, torque and torque–speed limits (seed 000 5.25-5.26), friction cones, clearances."""
    for k in range(model.nv):
        lo, hi = model.q_lower[k], model.q_upper[k]
        if np.isfinite(lo):
            opti.subject_to(Q[k, :] >= lo)
        if np.isfinite(hi):
            opti.subject_to(Q[k, :] <= hi)
    for i, act in enumerate(problem.actuators):
        tau_max, speed_max = act.max_torque, act.max_speed
        if act.axis is None:
            k = dof_index(model, problem, act.name, f"actuators.{act.name}")
            tau_max = min(tau_max, model.dof_effort_limit[k])
            speed_max = min(speed_max, model.dof_velocity_limit[k])
            if np.isfinite(tau_max) and np.isfinite(speed_max):      # |q̇/q̇_M + τ/τ_M| ≤ 1 (5.25)
                opti.subject_to(opti.bounded(-1, V[k, :] / speed_max + U[i, :] / tau_max, 1))
            if np.isfinite(speed_max):
                opti.subject_to(opti.bounded(-speed_max, V[k, :], speed_max))
        if np.isfinite(tau_max):                                      # |τ| ≤ τ_M (5.26)
            opti.subject_to(opti.bounded(-tau_max, U[i, :], tau_max))
    k = 0
    for an in anchor_list:
        if an.mu is not None:                                         # ground contact, normal +z: its cone
            F = {r: Lam[k + j, :] for j, r in enumerate(an.rows)}
            if 2 not in F:
                raise problem.error(f"contact '{an.name}' cannot move vertically: no normal force", "contact")
            opti.subject_to(F[2] >= an.min_normal)
            tangential = [F[r] for r in (0, 1) if r in F]
            if len(tangential) == 1:                                  # planar: −μ F_z ≤ F_t ≤ μ F_z
                opti.subject_to(opti.bounded(-an.mu * F[2], tangential[0], an.mu * F[2]))
            elif tangential:                                          # √(F_x² + F_y²) ≤ μ F_z, a convex form
                opti.subject_to(ca.sqrt(tangential[0] ** 2 + tangential[1] ** 2 + CONE_EPS ** 2) <= an.mu * F[2])
        k += len(an.rows)
    for i, spec in enumerate(problem.clearances):
        f = _frame(problem, model, spec["frame"], f"clearance.{i}.frame")
        q = ca.SX.sym("q", model.nq)
        z = ca.Function("z", [q], [symbolic.point_position(model, q, int(model.frame_body[f]), model.frame_p[f])[2]])
        opti.subject_to(z.map(Q.shape[1] - 2)(Q[:, 1:-1]) >= spec["min_height"])


def _boundary(opti, model, problem, Q, V, start_q, end_q, start_v, end_v):
    """Given start and end values, and periodicity end = start (re-indexed, plus offsets)."""
    for values, X, col in ((start_q, Q, 0), (end_q, Q, -1), (start_v, V, 0), (end_v, V, -1)):
        for k, x in values.items():
            opti.subject_to(X[k, col] == x)
    for end_name, start_name in problem.periodic_q.items():
        ke = dof_index(model, problem, end_name, f"periodic.q.{end_name}")
        ks = dof_index(model, problem, start_name, f"periodic.q.{end_name}")
        offset = problem.periodic_offset.get(end_name, 0.0)
        opti.subject_to(Q[ke, -1] == Q[ks, 0] + offset)
        opti.subject_to(V[ke, -1] == V[ks, 0])


def _guess(opti, model, problem, Q, V, Lam, q0, start_q, end_q, anchor_list, nf):
    """Straight lines from the start to the end values (the scene's q where none is given); contact normal
    forces sharing the weight."""
    N = Q.shape[1] - 1
    a_ = np.array([start_q.get(k, q0[k]) for k in range(model.nv)])
    b_ = np.array([end_q.get(k, a_[k]) for k in range(model.nv)])
    s = np.linspace(0.0, 1.0, N + 1)
    opti.set_initial(Q, a_[:, None] + (b_ - a_)[:, None] * s[None, :])
    opti.set_initial(V, np.repeat(((b_ - a_) / problem.duration)[:, None], N + 1, axis=1))
    contacts = [an for an in anchor_list if an.mu is not None]
    if nf and contacts:
        guess, k = np.zeros(nf), 0
        for an in anchor_list:
            if an.mu is not None and 2 in an.rows:
                guess[k + an.rows.index(2)] = model.total_mass * 9.81 / len(contacts)
            k += len(an.rows)
        opti.set_initial(Lam, np.repeat(guess[:, None], N + 1, axis=1))


def _frame(problem, model, name, key):
    """The index of the model's frame ``name``; the problem file's error at ``key`` if it has none."""
    try:
        return model.frame_index(name)
    except ValueError:
        raise problem.error(f"no frame '{name}' in model '{model.name}'", key, name) from None
