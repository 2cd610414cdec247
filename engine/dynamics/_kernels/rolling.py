"""Kernels: wheels rolling without slipping on planes, one whole step (driver: ``engine.dynamics.rolling``).

Wheel w is a row of ``wi`` (its body) and of ``wf`` (``WF_*`` columns: radius h, spin axis in its body frame, the
unit normal ``up`` of its plane and a point ``origin`` of it). The rows of the constraint are the 3 of each wheel,
J (3k, nv), in world axes. ``vec`` is the step's vector workspace: rows named ``V_*``, at least max(nq, nv, 3k)
wide, each read through ``[:n]`` slices. Nothing is allocated.

* ``rolling_acceleration``: the KKT system [M Jᵀ; J 0] [a; −λ] = [τ − h; −J̇v] (3.20/3.21) solved by its Schur
  complement on the Cholesky factor M = L Lᵀ (Nocedal & Wright §16.2): Y = L⁻¹Jᵀ, z = L⁻¹(τ − h),
  (Yᵀ Y) λ = −J̇v − Yᵀ z, a = L⁻ᵀ (z + Y λ). M from the CRBA, h = rnea(q, v, 0) whose forward pass also leaves
  each body's velocity and drift acceleration for J̇v (the closed form of ``RollingDisks.jacobian_rate``).
* ``rolling_step``: classical RK4 on the group (Runge–Kutta–Munthe-Kaas, as ``integrators.step_rk4``), then
  ``project``: Gauss–Newton on the altitudes Φ_w = up·(C_w − origin), then v ← v − M⁻¹Jᵀ (J M⁻¹Jᵀ)⁻¹ J v.
"""
from __future__ import annotations

import math

from engine.dynamics._kernels.algebra import (add, cross, dot, inline, kernel, load3, load9, mtv, mv, scale, split,
                                              sub)
from engine.dynamics._kernels.crba import mass_matrix
from engine.dynamics._kernels.jacobians import world_column
from engine.dynamics._kernels.kinematics import BAD, OK, check_dynamics, placements
from engine.dynamics._kernels.rnea import inverse_dynamics
from engine.dynamics.lie import dexp_inv_kernel, integrate_kernel
from engine.dynamics.pack import BI_IV, BI_NV, BI_PARENT, WS_A, WS_OMI_P, WS_OMI_R, WS_V

WF_H, WF_AXIS, WF_UP, WF_ORIGIN = 0, 1, 4, 7       # wf columns
WF_SIZE = 10
# vec rows: a zero vector, the bias h, z, λ, J̇v, the stage's q, v, ξ, scratch, then the 4 stages' A and K
V_ZERO, V_BIAS, V_Z, V_LAM, V_RATE, V_Q, V_V, V_XI, V_TMP = range(9)
V_A, V_K = 9, 13
V_SIZE = 17
RK4_C = (0.5, 0.5, 1.0)                            # stage i + 1 sits at c_i δt along stage i's slopes
NOT_DEFINITE = 3                                   # status: M or J M⁻¹Jᵀ not positive definite (J rank-deficient)


@inline
def contact_point(ws, wf, b, w):
    """C = p − h u/|u|, u = up − (up·a) a, a = R axis: wheel w's lowest point (2.20/2.22); returns
    (C, R, p, a, u, |u|)."""
    R, p = load9(ws, b, WS_OMI_R), load3(ws, b, WS_OMI_P)
    a, up = mv(R, load3(wf, w, WF_AXIS)), load3(wf, w, WF_UP)
    u = sub(up, scale(dot(up, a), a))
    n = math.sqrt(dot(u, u))
    return sub(p, scale(wf[w, WF_H] / n, u)), R, p, a, u, n


@inline
def wheel_jacobian(bi, df, ws, wi, wf, J):
    """J (3k, nv): rows 3w..3w+2 the world velocity of wheel w's material point at C, column k = l_k + w_k × C
    for the dofs supporting its body ((l_k, w_k) = oS_k), from the stored placements."""
    J[:, :] = 0.0
    for w in range(wi.shape[0]):
        C = contact_point(ws, wf, wi[w], w)[0]
        j = wi[w]
        while j >= 0:
            for k in range(bi[j, BI_IV], bi[j, BI_IV] + bi[j, BI_NV]):
                l, om = world_column(df, ws, j, k)
                J[3 * w, k], J[3 * w + 1, k], J[3 * w + 2, k] = add(l, cross(om, C))
            j = bi[j, BI_PARENT]


@inline
def wheel_rates(ws, wi, wf, rate):
    """J̇v (3k,) = a_C + ω × (Ċ − v_C) per wheel (``RollingDisks.jacobian_rate``), from each body's velocity and
    drift acceleration (body frame, ws[:, WS_V], ws[:, WS_A]): a_C = R (a_l + α × x + ω_b × (v_l + ω_b × x)),
    x = Rᵀ(C − p), ȧ = ω × a, u̇ = −(up·ȧ) a − (up·a) ȧ, Ċ = v_o − h (u̇ − u (u·u̇)/|u|²)/|u|, v_C = v_o + ω × (C − p)."""
    for w in range(wi.shape[0]):
        b = wi[w]
        C, R, p, a, u, n = contact_point(ws, wf, b, w)
        up = load3(wf, w, WF_UP)
        vl, wb, al, ab = load3(ws, b, WS_V), load3(ws, b, WS_V + 3), load3(ws, b, WS_A), load3(ws, b, WS_A + 3)
        x = mtv(R, sub(C, p))
        v_o, om = mv(R, vl), mv(R, wb)
        a_dot = cross(om, a)
        u_dot = sub(scale(-dot(up, a_dot), a), scale(dot(up, a), a_dot))
        C_dot = sub(v_o, scale(wf[w, WF_H] / n, sub(u_dot, scale(dot(u, u_dot) / (n * n), u))))
        v_C = add(v_o, cross(om, sub(C, p)))
        a_C = mv(R, add(add(al, cross(ab, x)), cross(wb, add(vl, cross(wb, x)))))
        rate[3 * w], rate[3 * w + 1], rate[3 * w + 2] = add(a_C, cross(om, sub(C_dot, v_C)))


@kernel
def cholesky(A, n):
    """A[:n, :n] = L Lᵀ: L overwrites the lower triangle (the upper one is left). False if A is not positive
    definite."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        A[j, j] = math.sqrt(d)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / A[j, j]
    return True


@kernel
def lower_solve(L, B, n, columns):
    """B[:n, :columns] ← L⁻¹ B (forward substitution, column by column)."""
    for c in range(columns):
        for i in range(n):
            s = B[i, c]
            for k in range(i):
                s -= L[i, k] * B[k, c]
            B[i, c] = s / L[i, i]


@kernel
def lower_solve_vector(L, b, n):
    """b[:n] ← L⁻¹ b."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]


@kernel
def upper_solve_vector(L, b, n):
    """b[:n] ← L⁻ᵀ b (back substitution)."""
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@kernel
def schur(M, J, Y, S, n, m):
    """M ← L (M = L Lᵀ), Y = L⁻¹Jᵀ (n, m), S ← its factor of Yᵀ Y = J M⁻¹ Jᵀ (m, m). False if either is not
    positive definite."""
    if not cholesky(M, n):
        return False
    for r in range(m):
        for k in range(n):
            Y[k, r] = J[r, k]
    lower_solve(M, Y, n, m)
    gram(Y, S, n, m)
    return cholesky(S, m)


@kernel
def gram(Y, S, n, m):
    """S[:m, :m] ← Yᵀ Y over Y's first n rows and m columns."""
    for r in range(m):
        for c in range(r + 1):
            s = 0.0
            for k in range(n):
                s += Y[k, r] * Y[k, c]
            S[r, c] = S[c, r] = s


@kernel
def rolling_acceleration(mi, mf, ws, wd, q, v, tau, fext, g, wi, wf, M, J, Y, S, vec, a):
    """a (nv,) and λ (vec[V_LAM, :3k], the ground's force on each wheel, world axes) of the KKT system (module
    docstring) at checked inputs. Returns OK or NOT_DEFINITE."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    n, m = v.shape[0], 3 * wi.shape[0]
    bias, z, lam, rate = vec[V_BIAS, :n], vec[V_Z, :n], vec[V_LAM, :m], vec[V_RATE, :m]
    mass_matrix(bi, bf, di, df, ws, wd, q, M)
    inverse_dynamics(bi, bf, di, df, ws, q, v, vec[V_ZERO, :n], fext, g, bias)    # h; body v and drifts
    wheel_jacobian(bi, df, ws, wi, wf, J)
    wheel_rates(ws, wi, wf, rate)
    if not schur(M, J, Y, S, n, m):
        return NOT_DEFINITE
    for k in range(n):
        z[k] = tau[k] - bias[k]
    lower_solve_vector(M, z, n)                                     # z = L⁻¹(τ − h)
    for r in range(m):
        s = -rate[r]
        for k in range(n):
            s -= Y[k, r] * z[k]
        lam[r] = s                                                  # −J̇v − Yᵀ z
    lower_solve_vector(S, lam, m)
    upper_solve_vector(S, lam, m)
    for k in range(n):
        s = z[k]
        for r in range(m):
            s += Y[k, r] * lam[r]
        a[k] = s
    upper_solve_vector(M, a, n)                                     # a = L⁻ᵀ(z + Y λ)
    return OK


@kernel
def project(mi, mf, ws, wd, topo, q, v, wi, wf, M, J, Y, S, vec, iterations, tol):
    """(q, v) in place onto the constraints: Gauss–Newton on the altitudes Φ (least change of q: the normal rows
    G = upᵀ J_w, δ = −Gᵀ(G Gᵀ)⁻¹Φ, with Gᵀ in Y's first k columns and G Gᵀ in S's first k rows and columns) to
    |Φ| ≤ tol, then the nearest velocity in the kinetic-energy metric with J v = 0. Returns OK or NOT_DEFINITE."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    n, k, m = v.shape[0], wi.shape[0], 3 * wi.shape[0]
    phi, delta = vec[V_LAM, :k], vec[V_XI, :n]
    for _ in range(iterations):
        placements(bi, bf, ws, q)
        worst = 0.0
        for w in range(k):
            C = contact_point(ws, wf, wi[w], w)[0]
            phi[w] = dot(sub(C, load3(wf, w, WF_ORIGIN)), load3(wf, w, WF_UP))
            worst = max(worst, abs(phi[w]))
        if worst <= tol:
            break
        wheel_jacobian(bi, df, ws, wi, wf, J)
        for w in range(k):                                          # Gᵀ into Y's columns 0..k-1
            up = load3(wf, w, WF_UP)
            for c in range(n):
                Y[c, w] = up[0] * J[3 * w, c] + up[1] * J[3 * w + 1, c] + up[2] * J[3 * w + 2, c]
        gram(Y, S, n, k)                                            # G Gᵀ
        if not cholesky(S, k):
            return NOT_DEFINITE
        lower_solve_vector(S, phi, k)
        upper_solve_vector(S, phi, k)
        for c in range(n):
            s = 0.0
            for r in range(k):
                s -= Y[c, r] * phi[r]
            delta[c] = s
        integrate_kernel(topo[0], topo[1], topo[2], q, delta, vec[V_Q, :q.shape[0]], vec[V_TMP, :8])
        for i in range(q.shape[0]):
            q[i] = vec[V_Q, i]
    mass_matrix(bi, bf, di, df, ws, wd, q, M)
    wheel_jacobian(bi, df, ws, wi, wf, J)
    if not schur(M, J, Y, S, n, m):
        return NOT_DEFINITE
    mu = vec[V_LAM, :m]
    for r in range(m):
        s = 0.0
        for c in range(n):
            s += J[r, c] * v[c]
        mu[r] = s
    lower_solve_vector(S, mu, m)
    upper_solve_vector(S, mu, m)                                    # μ = (J M⁻¹Jᵀ)⁻¹ J v
    for c in range(n):
        s = 0.0
        for r in range(m):
            s += Y[c, r] * mu[r]
        delta[c] = s
    upper_solve_vector(M, delta, n)                                 # M⁻¹Jᵀ μ = L⁻ᵀ Y μ
    for c in range(n):
        v[c] -= delta[c]
    return OK


@kernel
def rolling_step(mi, mf, ws, wd, topo, q, v, tau, fext, g, dt, wi, wf, M, J, Y, S, vec, q_out, v_out, iterations,
                 tol):
    """(q_out, v_out) after δt: RK4 on the group (stage i + 1 at (q ⊕ ξᵢ, v + cᵢ δt Aᵢ), ξᵢ = cᵢ δt Kᵢ, its slope
    K = dexp⁻¹(ξᵢ, v + cᵢ δt Aᵢ); K₁ = v), then ``project``. Returns BAD (inputs), NOT_DEFINITE or the status
    of q."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_dynamics(bi, df, q, v, tau, fext, g)
    if status == BAD:
        return status
    n, nq = v.shape[0], q.shape[0]
    qs, vs, xi = vec[V_Q, :nq], vec[V_V, :n], vec[V_XI, :n]
    for k in range(n):
        vec[V_K, k] = v[k]
    if rolling_acceleration(mi, mf, ws, wd, q, v, tau, fext, g, wi, wf, M, J, Y, S, vec, vec[V_A, :n]) != OK:
        return NOT_DEFINITE
    for i in range(3):
        c = RK4_C[i] * dt
        for k in range(n):
            xi[k] = c * vec[V_K + i, k]
            vs[k] = v[k] + c * vec[V_A + i, k]
        integrate_kernel(topo[0], topo[1], topo[2], q, xi, qs, vec[V_TMP, :8])
        dexp_inv_kernel(topo[0], topo[2], topo[3], xi, vs, vec[V_K + i + 1, :n], vec[V_TMP, :n])
        if rolling_acceleration(mi, mf, ws, wd, qs, vs, tau, fext, g, wi, wf, M, J, Y, S, vec,
                                vec[V_A + i + 1, :n]) != OK:
            return NOT_DEFINITE
    for k in range(n):
        xi[k] = dt / 6.0 * (vec[V_K, k] + 2.0 * vec[V_K + 1, k] + 2.0 * vec[V_K + 2, k] + vec[V_K + 3, k])
        v_out[k] = v[k] + dt / 6.0 * (vec[V_A, k] + 2.0 * vec[V_A + 1, k] + 2.0 * vec[V_A + 2, k] + vec[V_A + 3, k])
    integrate_kernel(topo[0], topo[1], topo[2], q, xi, q_out, vec[V_TMP, :8])
    if project(mi, mf, ws, wd, topo, q_out, v_out, wi, wf, M, J, Y, S, vec, iterations, tol) != OK:
        return NOT_DEFINITE
    return status


@kernel
def checked_acceleration(mi, mf, ws, wd, q, v, tau, fext, g, wi, wf, M, J, Y, S, vec, a):
    """``rolling_acceleration`` after ``check_dynamics``: BAD, NOT_DEFINITE or the status of q."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_dynamics(bi, df, q, v, tau, fext, g)
    if status == BAD:
        return status
    if rolling_acceleration(mi, mf, ws, wd, q, v, tau, fext, g, wi, wf, M, J, Y, S, vec, a) != OK:
        return NOT_DEFINITE
    return status
