"""Seed 004's gesture synthesis (Riccoboni 2022 §III.3, raw L2003-2126): one driven joint follows two joined
smooth steps whose timing and amplitude are optimised, the other joints are free (hybrid dynamics, §2.5).

    φ(t) = φ_M S(t / t_M)                                       on [0, t_M]      (Eqs. 71, 73-77)
    φ(t) = φ_M + (φ_end − φ_M) S((t − t_M) / (t_f − t_M))        on [t_M, t_f]    (Eq. 72, "same procedure")
    S(s) = 35 s⁴ − 84 s⁵ + 70 s⁶ − 20 s⁷: S(0) = 0, S(1) = 1, S′ = S″ = S‴ = 0 at both, S(½) = ½ (Eq. 77)

    min over (t_f, t_M, φ_M):  f₂ = ∫₀^{t_f} |C(t)| dt                                              (Eq. 78)
    s.t. t_f, t_M, φ_M in their boxes, t_f − t_M ≥ gap, turn_min ≤ θ(t_f) − θ(0) ≤ turn_max     (Table 9)

C is the driven joint's torque, θ a free joint (the rotation about the bar).  The thesis simulates each
candidate (MDA's direct model) and lets fmincon's SQP difference it (354 evaluations).  Here the free joints'
trajectory is collocated with the three parameters (trapezoidal, two phases of N₁ and N₂ intervals meeting at
t_M, so each polynomial is exact at its nodes), IPOPT sees exact derivatives, and |C| is smoothed as
√(C² + ε²).  The free rows of inverse dynamics are the hybrid dynamics' A q̈_f = B; the driven row is C.
"""
from __future__ import annotations

import time

import casadi as ca
import numpy as np

from engine.optimise import symbolic
from engine.optimise.collocation import Result, dof_index

MIN_LEVEL = 8   # the coarsest mesh of the refinement: at least this many intervals per phase


def smooth_step(s):
    """S(s) and its first two derivatives (per unit s)."""
    return (35 * s ** 4 - 84 * s ** 5 + 70 * s ** 6 - 20 * s ** 7,
            140 * s ** 3 - 420 * s ** 4 + 420 * s ** 5 - 140 * s ** 6,
            420 * s ** 2 - 1680 * s ** 3 + 2100 * s ** 4 - 840 * s ** 5)


def _phase(s, duration, start, rise):
    """start + rise S(s) on a phase of length ``duration``, with its time derivatives."""
    S, dS, ddS = smooth_step(s)
    return start + rise * S, rise * dS / duration, rise * ddS / duration ** 2


def solve(model, problem, q_scene, gravity, verbose=False) -> Result:
    """Optimise the smooth-step gesture of ``problem`` (its ``smooth_step``) on ``model``, from [start.q] (the
    scene's q where not given) at rest unless [start.v] says otherwise.  Mesh refinement: the problem is solved
    on a quarter, then half, then all of its intervals, each solve starting from the previous one (from a cold
    guess IPOPT stalls on fine meshes of this unstable motion)."""
    t0 = time.perf_counter()
    spec, nv = problem.smooth_step, model.nv
    d = dof_index(model, problem, spec.joint, "smooth_step.joint")
    turn = dof_index(model, problem, spec.turn_joint, "smooth_step.turn_joint")
    q_start, v_start = np.array(q_scene, float), np.zeros(nv)
    for values, target, key in ((problem.start_q, q_start, "start.q"), (problem.start_v, v_start, "start.v")):
        for name, x in values.items():
            target[dof_index(model, problem, name, f"{key}.{name}")] = x
    F, (N1, N2) = symbolic.rnea_function(model, gravity, problem.friction_speed), spec.intervals
    levels = [(N1 // f, N2 // f) for f in (4, 2) if min(N1 // f, N2 // f) >= MIN_LEVEL] + [(N1, N2)]
    result, iterations, counts = None, 0, {}
    for level in levels:
        result = _collocate(model, spec, F, d, turn, q_start, v_start, level, result, verbose)
        iterations += result.iterations
        counts = {k: counts.get(k, 0) + n for k, n in result.evaluations.items()}
    result.iterations, result.evaluations, result.wall_time = iterations, counts, time.perf_counter() - t0
    return result


def _collocate(model, spec, F, d, turn_dof, q_start, v_start, intervals, previous, verbose):
    """One trapezoidal transcription on ``intervals`` (N₁, N₂), started from ``previous`` (a Result) or cold."""
    nv, (N1, N2) = model.nv, intervals
    free = [k for k in range(nv) if k != d]
    turn = free.index(turn_dof)
    opti = ca.Opti()
    t_f, t_M, phi_M = opti.variable(), opti.variable(), opti.variable()
    for (lo, hi), x in ((spec.duration, t_f), (spec.peak_time, t_M), (spec.peak, phi_M)):
        opti.subject_to(opti.bounded(lo, x, hi))
    opti.subject_to(t_f - t_M >= spec.gap)
    Qf, Vf, Af = (opti.variable(len(free), N1 + N2 + 1) for _ in range(3))
    nodes = [(k / N1, t_M, 0.0, phi_M) for k in range(N1 + 1)] + \
            [(k / N2, t_f - t_M, phi_M, spec.end - phi_M) for k in range(1, N2 + 1)]
    C, times, weights = [], [], []
    for k, (s, duration, start, rise) in enumerate(nodes):
        phi, dphi, ddphi = _phase(s, duration, start, rise)
        q, v, a = (ca.MX.zeros(nv) for _ in range(3))
        q[free], v[free], a[free] = Qf[:, k], Vf[:, k], Af[:, k]
        q[d], v[d], a[d] = phi, dphi, ddphi
        tau = F(q, v, a)
        opti.subject_to(tau[free] == 0)                                   # free joints: A q̈_f = B
        C.append(tau[d])
        times.append(s * t_M if k <= N1 else t_M + s * (t_f - t_M))
    for k in range(N1 + N2):                                              # trapezoidal defects, per phase
        h = t_M / N1 if k < N1 else (t_f - t_M) / N2
        opti.subject_to(Qf[:, k + 1] - Qf[:, k] == h / 2 * (Vf[:, k] + Vf[:, k + 1]))
        opti.subject_to(Vf[:, k + 1] - Vf[:, k] == h / 2 * (Af[:, k] + Af[:, k + 1]))
        weights.append(h)
    opti.subject_to(Qf[:, 0] == q_start[free])
    opti.subject_to(Vf[:, 0] == v_start[free])
    opti.subject_to(opti.bounded(spec.turn[0], Qf[turn, -1] - Qf[turn, 0], spec.turn[1]))
    w = [weights[0] / 2] + [(weights[k - 1] + weights[k]) / 2 for k in range(1, N1 + N2)] + [weights[-1] / 2]
    abs_C = [ca.sqrt(c ** 2 + spec.smoothing ** 2) for c in C]
    opti.minimize(sum(wk * ck for wk, ck in zip(w, abs_C)))
    _guess(opti, spec, (t_f, t_M, phi_M), (Qf, Vf), q_start, free, turn, (N1, N2), previous)
    opti.solver("ipopt", {"print_time": False}, {"max_iter": spec.max_iterations, "tol": spec.tolerance,
                                                 "print_level": 5 if verbose else 0, "sb": "yes"})
    try:
        value = opti.solve().value
    except RuntimeError:
        value = opti.debug.value
    stats = opti.stats()
    t = np.array([float(value(x)) for x in times])
    q, v, a = (np.zeros((len(t), nv)) for _ in range(3))
    q[:, free], v[:, free], a[:, free] = (np.asarray(value(X)).reshape(len(free), -1).T for X in (Qf, Vf, Af))
    for k, (s, duration, start, rise) in enumerate(nodes):
        q[k, d], v[k, d], a[k, d] = (float(value(x)) for x in _phase(s, duration, start, rise))
    tau = np.array([np.asarray(F(q[k], v[k], a[k])).ravel() for k in range(len(t))])
    tau[:, free] = 0.0
    w_num = np.array([float(value(x)) for x in w])
    counts = {k[len("n_call_"):]: int(v_) for k, v_ in stats.items() if k.startswith("n_call_nlp")}
    return Result(t=t, q=q, v=v, a=a, tau=tau, u=tau[:, [d]], forces=np.zeros((len(t), 0)),
                  joint_names=tuple(model.joint_name[int(model.dof_joint[k])] for k in range(nv)),
                  actuator_names=(spec.joint,), energy=float(w_num @ np.abs(tau[:, d] * v[:, d])),
                  effort=float(w_num @ np.abs(tau[:, d])), closure_residual=0.0,          # f₂ (Eq. 78)
                  status=str(stats.get("return_status", "unknown")), iterations=int(stats.get("iter_count", 0)),
                  evaluations=counts, wall_time=0.0,
                  meta={"t_f": float(value(t_f)), "t_M": float(value(t_M)), "phi_M": float(value(phi_M))})


def _guess(opti, spec, params, states, q_start, free, turn, intervals, previous):
    """From ``previous``: its parameters, and its free joints interpolated at the new nodes.  Cold: mid-box
    parameters, the free joints still but the turn growing linearly to its first bound."""
    (t_f, t_M, phi_M), (Qf, Vf), (N1, N2) = params, states, intervals
    if previous is None:
        guesses = (sum(spec.duration) / 2, min(sum(spec.peak_time) / 2, sum(spec.duration) / 2 - spec.gap),
                   sum(spec.peak) / 2)
        q = np.repeat(np.asarray(q_start)[free][:, None], N1 + N2 + 1, axis=1)
        q[turn] += np.linspace(0.0, spec.turn[0], N1 + N2 + 1)
        v = np.zeros_like(q)
    else:
        m = previous.meta
        guesses = (m["t_f"], m["t_M"], m["phi_M"])
        t = np.r_[np.linspace(0.0, m["t_M"], N1 + 1), np.linspace(m["t_M"], m["t_f"], N2 + 1)[1:]]
        q, v = (np.array([np.interp(t, previous.t, X[:, k]) for k in free]) for X in (previous.q, previous.v))
    for x, g in zip((t_f, t_M, phi_M), guesses):
        opti.set_initial(x, g)
    opti.set_initial(Qf, q)
    opti.set_initial(Vf, v)
