"""numba kernel of the nonsmooth Newton solver's interior-point attempt (``newton.py``,
``_stepping_kernels.solve_groups``): a primal–dual interior-point method on the exact contact problem, run from a
cold start where Newton's iterations have stalled.

Newton on the Alart–Curnier function stalls on jammed hyperstatic supports (Talos lying, its folded legs pressed
on each other and its joints on their limits): the sticking contacts' velocities that W_AA cannot cancel
(1e-6–2e-5 m/s) ask for a contact to slip with internal forces of null W_AA moved to its cone's boundary, and
neither the merit function's line search nor Gauss–Seidel nor the proximal attempt finds the way from the warm
start (1.4 % of part d's steps, each with a solution: Acary, Cadoux, Lemaréchal & Malick 2011's strict
feasibility holds). An interior-point method does not search for the active set: it follows the central path
from inside every cone, where all contacts slip a little, to the solution (on the 83 stalled problems of one
recorded fall: 83 solved, 24 iterations at the median; session 19's study).

The problem, on each block b (cone.py, seed 000 eqs. 3.26–3.27; v = W f + u):

* contact, friction μ > 0: x = (μ f_n, f_t) ∈ L and z = ((v_n + μ‖v_t‖)/μ, v_t) ∈ L, xᵀz = 0 (L the Lorentz cone
  ‖(x₁, x₂)‖ ≤ x₀): f ∈ K_μ, De Saxcé's ũ = (v_n + μ‖v_t‖, v_t) ∈ K_μ* = K_{1/μ} and fᵀũ = xᵀz = 0;
* joint limit: f ≥ 0, z = v ≥ 0, f z = 0;
* joint friction, bound β: p = β + f ≥ 0, q = β − f ≥ 0, v = y − w with y, w ≥ 0, p y = q w = 0.

The unknowns are f and the dual variables z (contacts, limits), y, w (friction rows), z tied to v by the residual
R = z − Z(v) (contacts; its nonlinear De Saxcé term linearized through Z's Jacobian G = ∂Z/∂v), z − v (limits),
v − y + w (friction). Each iteration takes a Newton step on R = 0 and on the centred complementarity x ∘ z = κ e
(Jordan product, e = (1, 0, 0); f z = κ, p y = q w = κ on the rows), in Nesterov–Todd scaling on the cones
(Vandenberghe 2010, "The CVXOPT linear and quadratic cone program solvers", §4: λ = W_NT z = W_NT⁻¹ x), with
Mehrotra's predictor–corrector (Mehrotra 1992, SIAM J. Optim. 2(4)): the affine step (κ = 0) sets σ = (gap after
it / gap)³, floored at θ (gap₀/gap)(‖R‖/‖R₀‖) so that complementarity does not run ahead of feasibility; the
corrector adds the predictor's second-order term. The step eliminates the duals, leaving an n × n system in Δf:

    (W + D) Δf = b,   D = blockdiag(G⁻¹ W_NT⁻² diag(μ, 1, 1) per contact, z/f per limit, y/p + w/q per friction row)

solved by LU (D is not symmetric; ``_linalg_kernels.lu_factor`` once an iteration, for the predictor, the
corrector and the centred steps). Its length is 0.99 of the way to the cones' boundary, shortened by 0.7 until
every pair stays in the neighbourhood √(det x det z) ≥ γ gap/rank; a step shorter than STEP_MIN is taken again
with more centring (σ ≥ 0.3, then σ = 1, no corrector). The problem is solved in the scale of each block
(rows × d_b, d_b = 1/√(mean W_bb's diagonal): W → D W D, so that self-contacts between light links, W_bb ≈ 1e-3,
and the trunk's, ≈ 1e-4, take steps of one size); every iterate is projected on K and checked in the original
scale on the solver's own measure (the natural residual, ``_kernels.natural_residual``).

It stops converged at ``tol · max(‖f‖, r₀)`` as Newton, or gives up after ``max_iter`` iterations, STALL
iterations without halving its best residual, or JAM steps in a row shorter than 1e-3. It takes contacts with μ > 0,
joint limits and joint friction rows with a positive bound; a problem with a bilateral block or a frictionless
contact is left to the proximal attempt (``applies``). Parameters from session 19's study on the stalled problems
(θ = 0.05 solved 82 of the 83, 0.2 77; a smoothed ‖v_t‖ 77).

With Z's De Saxcé term dropped (``saxce`` = 0: z = (v_n/μ, v_t), G⁻¹ = diag(μ, 1, 1)) the same iterations solve the
associated problem, the optimality condition of the convex min ½ fᵀW f + uᵀf on K (Anitescu 2006, Math. Program.
105(1); the problem MuJoCo solves): ``associated_attempt``, whose solution is a start for Newton where everything
else failed (session 22).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._kernels import BILATERAL, CONTACT, FRICTION, LIMIT, natural_residual, project_forces, velocity
from engine.contact._linalg_kernels import lu_factor, lu_solve

THETAS = (0.1, 0.01, 0.03)  # σ's floor θ (gap₀/gap)(‖R‖/‖R₀‖) of the first run, then of the next ones, if any
NEIGHBOURHOOD = 1e-3        # γ: each pair's √(det x det z) (a row's product) ≥ γ gap / rank
STEP_MIN = 0.2              # a shorter step is taken again with more centring
START_FORCE = 0.1           # the cold start's f_n: this × max(1, max|u| / mean W_ii) (scaled)
STALL, JAM = 25, 3          # give up: STALL iterations without halving the best residual, JAM steps < 1e-3
ASSOCIATED_TOL = 1e-8       # the associated problem is solved at this × its start's gap and ‖R‖
GROWTH = 10.0               # no iterate taken beyond this × max(‖f‖ at the start, the zero force's residual)
ASSOCIATED_GROWTH = 100.0   # the same for the associated problem (``associated_attempt``)
MAX_ITER = 50               # a run's iterations at most (beyond the caller's max_iter)

#: numpy's error model: a division by zero gives inf or NaN, which ``lu_factor``, ``lu_solve`` and the cone tests
#: reject
kernel = njit(cache=True, nogil=True, error_model="numpy")


@kernel
def applies(block_kind, block_mu):
    """Whether the problem is one this method takes: contacts with μ > 0, limit rows and friction rows with a
    positive bound (no bilateral block)."""
    for b in range(block_kind.shape[0]):
        kind = block_kind[b]
        if kind == BILATERAL or (kind != LIMIT and not block_mu[b] > 0.0):
            return False
    return True


@kernel
def interior_point_attempt(W, u, block_start, block_kind, block_mu, block_rho, tol, zero_residual, budget, f):
    """The attempt: ``interior_point`` runs with σ's floor θ = 0.1, then, unconverged, 0.01, then 0.03, each of
    MAX_ITER iterations at most and ``budget`` in all (``_proximal_kernels.second_attempts``), no iterate beyond
    ‖f‖ = GROWTH max(‖f‖, r₀) taken (f: the caller's best iterate so far; the proximal attempt's bound). Where the
    first stalls or jams, another often converges fast (its path hugs the boundary closer, or less close: of five
    steps of a fall left unconverged by the first, the second solved three in 13–18 iterations; of three steps left
    by the first two, the third solved two in 13 and 16). Which θ solves a problem is hard to foresee: on 167
    recorded problems (alone, cold, unbounded), 0.1 solves 155, 0.01 152, 0.03 155 (0.3: 150, 0.003: 149), the three
    in this order 163; a later run only takes what the earlier ones leave, so only those steps change when one is
    added. All or nothing: f becomes the solution found, or stays as it was, so that the caller goes on as without
    the attempt (a sliding cube's proximal attempt converges from Newton's best iterate, where the attempt's best
    iterate differs from one rounding of the problem to another). Returns (iterations, converged)."""
    iterations, converged = 0, False
    f_max = GROWTH * max(math.sqrt(np.dot(f, f)), zero_residual)
    for theta in THETAS:
        if converged or iterations >= budget:
            break
        k, converged = interior_point(W, u, block_start, block_kind, block_mu, block_rho, tol, zero_residual, theta,
                                      f_max, min(MAX_ITER, budget - iterations), f, 1.0)
        iterations += k
    return iterations, converged


@kernel
def associated_attempt(W, u, block_start, block_kind, block_mu, block_rho, tol, zero_residual, max_iter, f):
    """The associated problem's solution, as a start for Newton where the exact problem's interior-point runs gave
    up: ``interior_point`` with σ's floor THETAS[0] and Z's De Saxcé term dropped, z = (v_n/μ, v_t) ∈ L. That
    problem (v_n ≥ 0 in place of v_n + μ‖v_t‖ ≥ 0: the contacts may separate while they slip, Anitescu 2006's
    convex relaxation, which MuJoCo solves) is the optimality condition of a convex program, min ½ fᵀW f + uᵀf on
    K, whose solution the central path reaches where the exact problem's jams; the exact solution is often near.
    Of the 7 recorded problems the earlier attempts left unconverged in session 22, Newton from this solution solves
    3 (Talos landing on its joint limits, part d step 944 from 0 nm: this in 9 iterations, then Newton in 7;
    docs/architecture.md, A last attempt). f becomes its solution, or stays as it was (none within ``max_iter``
    iterations, or only beyond ‖f‖ = ASSOCIATED_GROWTH max(‖f‖, r₀)). Returns (iterations, found)."""
    f_max = ASSOCIATED_GROWTH * max(math.sqrt(np.dot(f, f)), zero_residual)
    return interior_point(W, u, block_start, block_kind, block_mu, block_rho, tol, zero_residual, THETAS[0], f_max,
                          max_iter, f, 0.0)


@kernel
def interior_point(W, u, block_start, block_kind, block_mu, block_rho, tol, zero_residual, theta, f_max, max_iter,
                   solution, saxce=1.0):
    """Up to ``max_iter`` iterations from the cold start on the problem (W, u) (module docstring), σ floored at
    θ (gap₀/gap)(‖R‖/‖R₀‖). Every iterate is projected on K and checked on the natural residual; the first within
    the tolerance is written to ``solution``. An iterate with ‖f‖ > ``f_max`` is not taken: a problem without a
    solution (a body pushed out of two opposite contacts) has its central path go to infinity along internal
    forces, where ρ v falls below the rounding of f and the natural residual reads 0. ``saxce`` = 0: the associated
    problem instead (``associated_attempt``), no STALL rule, and ``solution`` is also written, and True returned,
    once its gap and ‖R‖ are ASSOCIATED_TOL of their starts. Returns (iterations, converged)."""
    n = u.shape[0]
    d = _block_scale(W, block_start, block_kind)
    Ws, us = np.empty((n, n)), np.empty(n)
    for i in range(n):
        us[i] = d[i] * u[i]
        for j in range(n):
            Ws[i, j] = d[i] * W[i, j] * d[j]
    cs, mu = _blocks_of(block_start, block_kind, block_mu, CONTACT)
    ls, _ = _blocks_of(block_start, block_kind, block_mu, LIMIT)
    fs, bound = _blocks_of(block_start, block_kind, block_mu, FRICTION)
    for j in range(fs.shape[0]):
        bound[j] /= d[fs[j]]
    m, nl, nf = cs.shape[0], ls.shape[0], fs.shape[0]
    f, z, zl, y, w = _cold_start(Ws, us, cs, ls, fs)
    rank, pairs = 2 * m + nl + 2 * nf, m + nl + 2 * nf
    x, p, q = np.empty((m, 3)), np.empty(nf), np.empty(nf)
    R, Rl, Rf = np.empty((m, 3)), np.empty(nl), np.empty(nf)
    Gi, H, Wm, Wi, lam = (np.empty((m, 3, 3)), np.empty((m, 3, 3)), np.empty((m, 3, 3)), np.empty((m, 3, 3)),
                          np.empty((m, 3)))
    M, lu, pivots, rhs = np.empty((n, n)), np.empty((n, n)), np.empty(n, np.int32), np.empty(n)
    Rc, Rcl, Rcp, Rcq = np.empty((m, 3)), np.empty(nl), np.empty(nf), np.empty(nf)
    dz, dzl, dy, dw = np.empty((m, 3)), np.empty(nl), np.empty(nf), np.empty(nf)
    c, cl, cp, cq = np.zeros((m, 3)), np.zeros(nl), np.zeros(nf), np.zeros(nf)      # Mehrotra's corrections
    fp, v, vp = np.empty(n), np.empty(n), np.empty(n)
    reference, since, jammed, gap0, R0 = math.inf, 0, 0, 0.0, 1.0
    for it in range(max_iter + 1):
        for i in range(n):                                  # the iterate, projected, on the solver's measure
            fp[i] = d[i] * f[i]
        project_forces(fp, block_start, block_kind, block_mu)
        velocity(W, fp, u, vp)
        residual = natural_residual(fp, vp, block_start, block_kind, block_mu, block_rho)[0]
        if np.dot(fp, fp) > f_max * f_max:                  # not taken (``f_max``)
            residual = math.inf
        if residual <= tol * max(math.sqrt(np.dot(fp, fp)), zero_residual):
            solution[:] = fp
            return it, True
        if residual < 0.5 * reference:
            reference, since = residual, 0
        else:
            since += 1
        if it == max_iter or (since >= STALL and saxce > 0.0):
            return it, False
        velocity(Ws, f, us, v)
        gap, norm_R = _residuals(f, v, z, zl, y, w, mu, bound, cs, ls, fs, x, p, q, R, Rl, Rf, saxce)
        if it == 0:
            gap0, R0 = gap, max(norm_R, 1e-300)
        elif saxce == 0.0 and gap <= ASSOCIATED_TOL * gap0 and norm_R <= ASSOCIATED_TOL * R0 and math.isfinite(
                residual):                                  # the associated problem solved
            solution[:] = fp
            return it, True
        _linearize(Ws, f, v, x, z, zl, y, w, p, q, mu, cs, ls, fs, Gi, H, Wm, Wi, lam, M, saxce)
        if not lu_factor(M, lu, pivots):                    # M singular or not finite: no step to take
            return it, False
        sigma, step = 0.0, 0.0
        for attempt in range(4):                            # predictor, corrector, two more centred steps
            corrector = attempt == 1
            if attempt >= 2:
                sigma = max(sigma, 0.3 if attempt == 2 else 1.0)
            kappa = sigma * gap / pairs
            _direction(f, zl, y, w, p, q, R, Rl, Rf, Gi, Wi, lam, cs, ls, fs, kappa, corrector, c, cl, cp, cq, rhs, Rc,
                       Rcl, Rcp, Rcq)
            df = lu_solve(lu, pivots, rhs)                  # M's one factorisation for the four right sides
            if df.shape[0] == 0:                           # not finite
                return it, False
            _duals(df, f, zl, y, w, p, q, H, Wi, cs, ls, fs, Rc, Rcl, Rcp, Rcq, dz, dzl, dy, dw)
            longest = _longest(df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw)
            if attempt == 0:                                # σ from the affine step, then its second-order term
                sigma = (_gap_after(min(1.0, longest), df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw)
                         / gap) ** 3
                sigma = min(1.0, max(sigma, theta * gap0 * norm_R / R0 / gap))
                _second_order(df, mu, cs, ls, fs, Wm, Wi, dz, dzl, dy, dw, c, cl, cp, cq)
                continue
            step = _neighbourhood_step(min(1.0, 0.99 * longest), rank, df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs,
                                       dz, dzl, dy, dw)
            if step > STEP_MIN:
                break
        jammed = jammed + 1 if step < 1e-3 else 0
        if jammed >= JAM:
            return it, False
        for i in range(n):
            f[i] += step * df[i]
        for k in range(m):
            for a in range(3):
                z[k, a] += step * dz[k, a]
        for k in range(nl):
            zl[k] += step * dzl[k]
        for k in range(nf):
            y[k] += step * dy[k]
            w[k] += step * dw[k]
    return max_iter, False


@kernel
def _block_scale(W, block_start, block_kind):
    """d (n,): 1/√(mean of W_bb's diagonal) on each block's rows (1 where it is not positive)."""
    d = np.ones(W.shape[0])
    for b in range(block_kind.shape[0]):
        s, e = block_start[b], block_start[b + 1]
        mean = 0.0
        for i in range(s, e):
            mean += W[i, i] / (e - s)
        if mean > 0.0:
            for i in range(s, e):
                d[i] = 1.0 / math.sqrt(mean)
    return d


@kernel
def _blocks_of(block_start, block_kind, block_mu, kind):
    """(first rows, block_mu) of the blocks of ``kind`` (a contact's μ, a friction row's bound)."""
    blocks = np.nonzero(block_kind == kind)[0]
    return block_start[blocks], block_mu[blocks]


@kernel
def _cold_start(W, u, cs, ls, fs):
    """Inside every cone: f_n and the limits' f = F₀ = START_FORCE max(1, max|u| / mean W_ii), f_t and the friction
    rows' f = 0; every dual V₀ = max|u| (z = (V₀, 0, 0) for a contact)."""
    n = u.shape[0]
    diagonal, largest = 0.0, 0.0
    for i in range(n):
        diagonal += W[i, i] / n
        largest = max(largest, abs(u[i]))
    largest = largest if largest > 0.0 else 1.0
    F0 = START_FORCE * max(largest / diagonal, 1.0) if diagonal > 0.0 else START_FORCE
    f, z = np.zeros(n), np.zeros((cs.shape[0], 3))
    for k in range(cs.shape[0]):
        f[cs[k]] = F0
        z[k, 0] = largest
    for k in range(ls.shape[0]):
        f[ls[k]] = F0
    return f, z, np.full(ls.shape[0], largest), np.full(fs.shape[0], largest), np.full(fs.shape[0], largest)


@kernel
def _residuals(f, v, z, zl, y, w, mu, bound, cs, ls, fs, x, p, q, R, Rl, Rf, saxce):
    """x = (μ f_n, f_t), p = β + f, q = β − f and the residuals R = z − Z(v), z − v, v − y + w (Z's De Saxcé term
    × ``saxce``: 1, or 0 for the associated problem). Returns (the duality gap Σ xᵀz + f z + p y + q w, ‖R‖)."""
    gap, norm = 0.0, 0.0
    for k in range(cs.shape[0]):
        s = cs[k]
        x[k, 0], x[k, 1], x[k, 2] = mu[k] * f[s], f[s + 1], f[s + 2]
        slip = max(math.hypot(v[s + 1], v[s + 2]), 1e-300)
        R[k, 0] = z[k, 0] - (v[s] + saxce * mu[k] * slip) / mu[k]
        R[k, 1], R[k, 2] = z[k, 1] - v[s + 1], z[k, 2] - v[s + 2]
        for a in range(3):
            gap += x[k, a] * z[k, a]
            norm += R[k, a] * R[k, a]
    for k in range(ls.shape[0]):
        Rl[k] = zl[k] - v[ls[k]]
        gap += f[ls[k]] * zl[k]
        norm += Rl[k] * Rl[k]
    for k in range(fs.shape[0]):
        p[k], q[k] = bound[k] + f[fs[k]], bound[k] - f[fs[k]]
        Rf[k] = v[fs[k]] - y[k] + w[k]
        gap += p[k] * y[k] + q[k] * w[k]
        norm += Rf[k] * Rf[k]
    return gap, math.sqrt(norm)


@kernel
def _linearize(W, f, v, x, z, zl, y, w, p, q, mu, cs, ls, fs, Gi, H, Wm, Wi, lam, M, saxce):
    """Per contact the Nesterov–Todd scaling (Wm, Wi = Wm⁻¹, λ = Wm z), H = Wi² diag(μ, 1, 1) and the inverse of Z's
    Jacobian, G⁻¹ = [[μ, −μ t₁/‖t‖, −μ t₂/‖t‖], [0, 1, 0], [0, 0, 1]] (t = v_t; the De Saxcé terms × ``saxce``);
    the reduced matrix M = W + D."""
    M[:, :] = W
    for k in range(cs.shape[0]):
        s = cs[k]
        slip = max(math.hypot(v[s + 1], v[s + 2]), 1e-300)
        Gi[k, :, :] = 0.0
        Gi[k, 0, 0] = mu[k]
        Gi[k, 0, 1], Gi[k, 0, 2] = -saxce * mu[k] * v[s + 1] / slip, -saxce * mu[k] * v[s + 2] / slip
        Gi[k, 1, 1] = Gi[k, 2, 2] = 1.0
        _nesterov_todd(x[k], z[k], Wm[k], Wi[k], lam[k])
        for a in range(3):
            for b in range(3):
                H[k, a, b] = (Wi[k, a, 0] * Wi[k, 0, b] + Wi[k, a, 1] * Wi[k, 1, b] + Wi[k, a, 2] * Wi[k, 2, b]) * (
                    mu[k] if b == 0 else 1.0)
        for a in range(3):
            for b in range(3):
                M[s + a, s + b] += Gi[k, a, 0] * H[k, 0, b] + Gi[k, a, 1] * H[k, 1, b] + Gi[k, a, 2] * H[k, 2, b]
    for k in range(ls.shape[0]):
        M[ls[k], ls[k]] += zl[k] / f[ls[k]]
    for k in range(fs.shape[0]):
        M[fs[k], fs[k]] += y[k] / p[k] + w[k] / q[k]


@kernel
def _nesterov_todd(x, z, Wm, Wi, lam):
    """The Nesterov–Todd scaling of the pair (x, z) inside L (Vandenberghe 2010 §4.3): Wm = β (2 w̄ w̄ᵀ − J),
    Wi = Wm⁻¹ = (2 J w̄ (J w̄)ᵀ − J)/β, J = diag(1, −1, −1), so that Wm z = Wi x = λ."""
    sx = math.sqrt(x[0] * x[0] - x[1] * x[1] - x[2] * x[2])
    sz = math.sqrt(z[0] * z[0] - z[1] * z[1] - z[2] * z[2])
    gamma = math.sqrt((1.0 + (x[0] * z[0] + x[1] * z[1] + x[2] * z[2]) / (sx * sz)) / 2.0)
    w0 = (x[0] / sx + z[0] / sz) / (2.0 * gamma) + 1.0
    w1, w2 = (x[1] / sx - z[1] / sz) / (2.0 * gamma), (x[2] / sx - z[2] / sz) / (2.0 * gamma)
    scale = 1.0 / math.sqrt(2.0 * w0)
    wb = (w0 * scale, w1 * scale, w2 * scale)
    Jw = (wb[0], -wb[1], -wb[2])
    beta = math.sqrt(sx / sz)
    for a in range(3):
        for b in range(3):
            J = (1.0 if a == 0 else -1.0) if a == b else 0.0
            Wm[a, b] = beta * (2.0 * wb[a] * wb[b] - J)
            Wi[a, b] = (2.0 * Jw[a] * Jw[b] - J) / beta
    for a in range(3):
        lam[a] = Wm[a, 0] * z[0] + Wm[a, 1] * z[1] + Wm[a, 2] * z[2]


@kernel
def _direction(f, zl, y, w, p, q, R, Rl, Rf, Gi, Wi, lam, cs, ls, fs, kappa, corrector, c, cl, cp, cq, rhs, Rc, Rcl,
               Rcp, Rcq):
    """The right side b of (W + D) Δf = b for the target κ (and Mehrotra's correction c, cl, cp, cq): per contact
    Rc = −Arw(λ)⁻¹ (κ e − λ ∘ λ − c), b = G⁻¹ (R − Wi Rc); per limit Rc = f z − κ + c, b = R − Rc/f; per friction
    row Rc_p = p y − κ + c_p, Rc_q = q w − κ + c_q, b = −R − Rc_p/p + Rc_q/q."""
    r = np.empty(3)
    for k in range(cs.shape[0]):
        l0, l1, l2 = lam[k, 0], lam[k, 1], lam[k, 2]
        r[0], r[1], r[2] = kappa - (l0 * l0 + l1 * l1 + l2 * l2), -2.0 * l0 * l1, -2.0 * l0 * l2
        if corrector:
            r[0], r[1], r[2] = r[0] - c[k, 0], r[1] - c[k, 1], r[2] - c[k, 2]
        a0 = (l0 * r[0] - l1 * r[1] - l2 * r[2]) / (l0 * l0 - l1 * l1 - l2 * l2)   # Arw(λ)⁻¹ r
        Rc[k, 0], Rc[k, 1], Rc[k, 2] = -a0, -(r[1] - a0 * l1) / l0, -(r[2] - a0 * l2) / l0
        for a in range(3):
            r[a] = R[k, a] - (Wi[k, a, 0] * Rc[k, 0] + Wi[k, a, 1] * Rc[k, 1] + Wi[k, a, 2] * Rc[k, 2])
        for a in range(3):
            rhs[cs[k] + a] = Gi[k, a, 0] * r[0] + Gi[k, a, 1] * r[1] + Gi[k, a, 2] * r[2]
    for k in range(ls.shape[0]):
        Rcl[k] = f[ls[k]] * zl[k] - kappa + (cl[k] if corrector else 0.0)
        rhs[ls[k]] = Rl[k] - Rcl[k] / f[ls[k]]
    for k in range(fs.shape[0]):
        Rcp[k] = p[k] * y[k] - kappa + (cp[k] if corrector else 0.0)
        Rcq[k] = q[k] * w[k] - kappa + (cq[k] if corrector else 0.0)
        rhs[fs[k]] = -Rf[k] - Rcp[k] / p[k] + Rcq[k] / q[k]


@kernel
def _duals(df, f, zl, y, w, p, q, H, Wi, cs, ls, fs, Rc, Rcl, Rcp, Rcq, dz, dzl, dy, dw):
    """The duals' steps from Δf: dz = −Wi Rc − H Δf (contacts), (−Rc − z Δf)/f (limits), dy = (−Rc_p − y Δf)/p,
    dw = (−Rc_q + w Δf)/q (friction rows)."""
    for k in range(cs.shape[0]):
        s = cs[k]
        for a in range(3):
            dz[k, a] = -(Wi[k, a, 0] * Rc[k, 0] + Wi[k, a, 1] * Rc[k, 1] + Wi[k, a, 2] * Rc[k, 2]) - (
                H[k, a, 0] * df[s] + H[k, a, 1] * df[s + 1] + H[k, a, 2] * df[s + 2])
    for k in range(ls.shape[0]):
        dzl[k] = (-Rcl[k] - zl[k] * df[ls[k]]) / f[ls[k]]
    for k in range(fs.shape[0]):
        dy[k] = (-Rcp[k] - y[k] * df[fs[k]]) / p[k]
        dw[k] = (-Rcq[k] + w[k] * df[fs[k]]) / q[k]


@kernel
def _cone_step(x0, x1, x2, d0, d1, d2):
    """The largest t ≥ 0 with x + t d in L (x inside): the smallest nonnegative root of det(x + t d) = 0 (the
    numerically stable pair of roots), or where x₀ + t d₀ = 0."""
    A = d0 * d0 - d1 * d1 - d2 * d2
    B = 2.0 * (x0 * d0 - x1 * d1 - x2 * d2)
    C = max(x0 * x0 - x1 * x1 - x2 * x2, 0.0)
    t = math.inf
    discriminant = B * B - 4.0 * A * C
    if discriminant >= 0.0:
        h = -0.5 * (B + math.copysign(math.sqrt(discriminant), B))
        if A != 0.0 and h / A >= 0.0:
            t = min(t, h / A)
        if h != 0.0 and C / h >= 0.0:
            t = min(t, C / h)
    if d0 < 0.0:
        t = min(t, -x0 / d0)
    return t


@kernel
def _longest(df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw):
    """The longest step that keeps every pair in its cone."""
    t = math.inf
    for k in range(cs.shape[0]):
        s = cs[k]
        t = min(t, _cone_step(x[k, 0], x[k, 1], x[k, 2], mu[k] * df[s], df[s + 1], df[s + 2]))
        t = min(t, _cone_step(z[k, 0], z[k, 1], z[k, 2], dz[k, 0], dz[k, 1], dz[k, 2]))
    for k in range(ls.shape[0]):
        t = min(t, _ray_step(f[ls[k]], df[ls[k]]), _ray_step(zl[k], dzl[k]))
    for k in range(fs.shape[0]):
        t = min(t, _ray_step(p[k], df[fs[k]]), _ray_step(q[k], -df[fs[k]]), _ray_step(y[k], dy[k]),
                _ray_step(w[k], dw[k]))
    return t


@kernel
def _ray_step(a, da):
    """The largest t with a + t da ≥ 0 (a > 0)."""
    return -a / da if da < 0.0 else math.inf


@kernel
def _gap_after(t, df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw):
    """The duality gap after a step t."""
    gap = 0.0
    for k in range(cs.shape[0]):
        s = cs[k]
        gap += ((x[k, 0] + t * mu[k] * df[s]) * (z[k, 0] + t * dz[k, 0])
                + (x[k, 1] + t * df[s + 1]) * (z[k, 1] + t * dz[k, 1])
                + (x[k, 2] + t * df[s + 2]) * (z[k, 2] + t * dz[k, 2]))
    for k in range(ls.shape[0]):
        gap += (f[ls[k]] + t * df[ls[k]]) * (zl[k] + t * dzl[k])
    for k in range(fs.shape[0]):
        gap += (p[k] + t * df[fs[k]]) * (y[k] + t * dy[k]) + (q[k] - t * df[fs[k]]) * (w[k] + t * dw[k])
    return gap


@kernel
def _second_order(df, mu, cs, ls, fs, Wm, Wi, dz, dzl, dy, dw, c, cl, cp, cq):
    """Mehrotra's correction from the affine step: (Wi Δx) ∘ (Wm Δz) per contact (Δx = diag(μ, 1, 1) Δf), Δf Δz per
    limit, Δf Δy and −Δf Δw per friction row."""
    a, b = np.empty(3), np.empty(3)
    for k in range(cs.shape[0]):
        s = cs[k]
        dx0, dx1, dx2 = mu[k] * df[s], df[s + 1], df[s + 2]
        for i in range(3):
            a[i] = Wi[k, i, 0] * dx0 + Wi[k, i, 1] * dx1 + Wi[k, i, 2] * dx2
            b[i] = Wm[k, i, 0] * dz[k, 0] + Wm[k, i, 1] * dz[k, 1] + Wm[k, i, 2] * dz[k, 2]
        c[k, 0] = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
        c[k, 1], c[k, 2] = a[0] * b[1] + b[0] * a[1], a[0] * b[2] + b[0] * a[2]
    for k in range(ls.shape[0]):
        cl[k] = df[ls[k]] * dzl[k]
    for k in range(fs.shape[0]):
        cp[k], cq[k] = df[fs[k]] * dy[k], -df[fs[k]] * dw[k]


@kernel
def _neighbourhood_step(t, rank, df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw):
    """t, shortened by 0.7 until every pair is strictly inside and √(det x det z) (a row's product) ≥ γ gap/rank
    after the step; 0 below 1e-8."""
    while t > 1e-8:
        if _inside(t, rank, df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw):
            return t
        t *= 0.7
    return 0.0


@kernel
def _inside(t, rank, df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw):
    """Whether the step t keeps every pair inside and in the neighbourhood (``_neighbourhood_step``)."""
    floor = NEIGHBOURHOOD * _gap_after(t, df, x, z, f, zl, y, w, p, q, mu, cs, ls, fs, dz, dzl, dy, dw) / rank
    for k in range(cs.shape[0]):
        s = cs[k]
        X0, X1, X2 = x[k, 0] + t * mu[k] * df[s], x[k, 1] + t * df[s + 1], x[k, 2] + t * df[s + 2]
        Z0, Z1, Z2 = z[k, 0] + t * dz[k, 0], z[k, 1] + t * dz[k, 1], z[k, 2] + t * dz[k, 2]
        det_x, det_z = X0 * X0 - X1 * X1 - X2 * X2, Z0 * Z0 - Z1 * Z1 - Z2 * Z2
        if not (X0 > 0.0 and Z0 > 0.0 and det_x > 0.0 and det_z > 0.0 and math.sqrt(det_x * det_z) >= floor):
            return False
    for k in range(ls.shape[0]):
        a, b = f[ls[k]] + t * df[ls[k]], zl[k] + t * dzl[k]
        if not (a > 0.0 and b > 0.0 and a * b >= floor):
            return False
    for k in range(fs.shape[0]):
        a, b = p[k] + t * df[fs[k]], y[k] + t * dy[k]
        c, e = q[k] - t * df[fs[k]], w[k] + t * dw[k]
        if not (a > 0.0 and b > 0.0 and c > 0.0 and e > 0.0 and a * b >= floor and c * e >= floor):
            return False
    return True
