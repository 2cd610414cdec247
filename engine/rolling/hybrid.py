"""Wheels that leave and hit the ground: the event-driven hybrid dynamics of seed 001 §2.7–2.9 (Mauny 2018 Ch. 3–4).

The contact configuration is the set of wheels on the ground (for a bicycle: free, front, rear, both; any number
of wheels here), each on the plane of the face it touches (``ground.Support``). Between events the multibody
moves by the continuous dynamics of its configuration (3.15/3.21: the KKT rolling dynamics of
``engine.dynamics.rolling`` on the wheels in contact, RK4 and the projection onto their planes; free flight: ABA
and RK4). A step of length δt is integrated, then each wheel's event function is read at its end:

    on the ground:  λ_N, its normal force (3.20)           < 0: lift-off (soft, L2150)
                    the margin of its contact point in its face  < 0: lift-off (hard, the face ended)
                    its gap to the rest of the ground (its own plane or face and that face's edges left out)
                                                            < −GAP_TOL: collision with what it rolled into (a
                                                            kerb: the rim meets the kerb's edge when the hub is
                                                            h from it; the wheel then rolls on the edge's tangent
                                                            plane, its only support)
    in the air:     Φ, its gap (3.6, ``Ground.gap``)        < −GAP_TOL: collision (a wheel that has just left
                                                            the ground grazes it within rounding)

When one is negative the step is rewound and the earliest root s* of the events' functions of the sub-step
length s ∈ (0, δt] (each evaluation one RK4 sub-step from the start) is found by Brent's method (to
``TIME_TOL``); the sub-step to s* is taken, the event applied, and the rest of the step goes on (Fig 4.6). A
collision is an impact (``impact.predict_correct``: Newton restitution by the complete method 3.24, the plastic
reduced law 3.28/3.30, predict/correct on the sign of Λ_N); the wheels it keeps with γ_N⁺ = 0 are on the ground
afterwards, those it released or that bounce are in the air (a wheel that lands on an edge or a vertex rolls on
the plane tangent to it there). After every event the wheels with λ_N < 0 are released, the most negative first
(Remark 3.6 for forces).

Faults stop the step with a ``SimulationError`` naming the event (the Simulation keeps the last good state): a
root that Brent's method does not reach (an event function that jumps: |f(s*)| above its tolerance), a Zeno
sequence (more than ``ZENO_IMPACTS`` impacts within ``ZENO_WINDOW`` s), and a wheel released for λ_N < 0 that
would sink (``_check_separates``).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from engine.dynamics import aba, crba, forward_kinematics, kinetic_energy
from engine.dynamics.integrators import step_rk4
from engine.dynamics.rolling import RollingDisks, project, rolling_dynamics, step_rolling, wheel_rows
from engine.errors import SimulationError, UniverseError
from engine.rolling.impact import contact_frame, predict_correct

CONTACT_TOL = 1e-6     # m: a wheel this close to the ground at the start is on it
TIME_TOL = 1e-13       # s: Brent's tolerance on the event time
GAP_TOL = 1e-9         # m: |Φ(s*)| and |margin(s*)| at an accepted root
FORCE_TOL = 1e-6       # N: |λ_N(s*)| at an accepted root
ACC_TOL = 1e-6         # m/s²: a wheel released for λ_N < 0 may not sink faster than this
ZENO_IMPACTS, ZENO_WINDOW = 20, 1e-3
GAPS = ("gap", "kerb")  # event functions that are distances: a value within GAP_TOL below zero is grazing
EDGE = -2               # Support.face of an edge or vertex (engine/rolling/ground.py)


@dataclass(frozen=True)
class WheelEvent:
    """A discrete event: time ``t`` (s), ``kind`` (collision | lift-off), ``wheel`` (its name; wheels hitting
    together: joined by '+'), ``cause`` (gap, kerb; force, edge, impulse: released by an impact), the wheels on the
    ground after it, the impact's predictions ((wheels, Λ (k, 3) in each contact's (N, T, B) frame, N s,
    accepted), ...), the kinetic energy before and after (J) and how close to zero its function was."""

    t: float
    kind: str
    wheel: str
    cause: str
    on_ground: tuple
    predictions: tuple = ()
    kinetic: tuple = (0.0, 0.0)
    residual: float = 0.0     # the event's function where it was applied: Φ or the margin (m), λ_N (N)

    def line(self) -> str:
        """'t = 0.412345 s  collision  front_wheel (gap)  ->  front_wheel  Λ_N front_wheel 133.3 N s'."""
        text = (f"t = {self.t:.6f} s  {self.kind:9s} {self.wheel} ({self.cause})  ->  "
                f"{', '.join(self.on_ground) or 'free flight'}")
        for wheels, impulse, accepted in self.predictions:
            shown = ", ".join(f"{w} {lam[0]:.1f}" for w, lam in zip(wheels, impulse))
            text += f"  [Λ_N {shown} N s{'' if accepted else ' rejected'}]"
        return text


class _OnGround:
    """The wheels on the ground, each rolling on its support's plane: the interface of ``RollingDisks`` with the
    rows of every wheel stacked (3 per wheel, base axes)."""

    def __init__(self, disks):
        self.disks = disks
        self.bodies = tuple(b for d in disks for b in d.bodies)
        self.rows = wheel_rows(self.bodies, [h for d in disks for h in d.radii], [a for d in disks for a in d.axes],
                               [d.up for d in disks for _ in d.bodies], [d.origin for d in disks for _ in d.bodies])

    def jacobian(self, model, data, q):
        return np.vstack([d.jacobian(model, data, q) for d in self.disks])

    def jacobian_rate(self, model, data, q, v):
        return np.concatenate([d.jacobian_rate(model, data, q, v) for d in self.disks])

    def altitudes(self, model, data, q):
        return np.concatenate([d.altitudes(model, data, q) for d in self.disks])

    def normals(self):
        return np.vstack([d.up for d in self.disks])


class HybridWheels:
    """The wheels of one multibody (``bodies``, ``radii``, spin ``axes``, ``names``, ``restitution`` (ε_N, ε_T)
    each) on a ``Ground``; ``support`` {wheel: Support} is the contact configuration, ``events`` the log."""

    def __init__(self, model, bodies, radii, axes, names, restitution, ground, gravity, multibody="", sources=()):
        self.model, self.data = model, model.create_data()
        self.bodies, self.radii, self.names = tuple(bodies), tuple(radii), tuple(names)
        self.axes = tuple(np.asarray(a, float) / np.linalg.norm(a) for a in axes)
        self.restitution = {w: tuple(map(float, e)) for w, e in enumerate(restitution)}
        self.ground, self.gravity, self.multibody = ground, gravity, multibody
        self.sources = tuple(sources)                 # "file:line" of each wheel's element, for errors
        self.support, self.events, self.recent = {}, [], []
        self.force = np.zeros((len(bodies), 3))      # λ per wheel (base axes, N) at the end of the last step
        self._impacts = deque()
        self._forces = (None, {})                     # the last normal_forces: (its arguments, λ)

    # ---- geometry ------------------------------------------------------------------------------------------
    def disk(self, w, q):
        """(O, a): the centre and spin axis of wheel w at q (base frame)."""
        forward_kinematics(self.model, self.data, q)
        b = self.bodies[w]
        return self.data.oMi_p[b].copy(), self.data.oMi_R[b] @ self.axes[w]

    def gap(self, w, q, exclude=None):
        """(Φ, Support) of wheel w to the ground at q (``exclude``: a support left out, ``Ground.gap``)."""
        return self.ground.gap(*self.disk(w, q), self.radii[w], exclude)

    def _rolling(self, w, support):
        return RollingDisks(bodies=(self.bodies[w],), radii=(self.radii[w],), axes=(tuple(self.axes[w]),),
                            up=support.normal, origin=support.point, ground=support.name)

    def on_ground(self):
        """The wheels in contact (sorted) and their stacked constraints."""
        wheels = tuple(sorted(self.support))
        return wheels, _OnGround([self._rolling(w, self.support[w]) for w in wheels])

    # ---- configuration -------------------------------------------------------------------------------------
    def start(self, q, v, keep_log=False):
        """A new run (or a state with no configuration): the wheels within ``CONTACT_TOL`` of the ground are on
        it; (q, v) projected on them."""
        self.recent, self.support = [], {}
        if not keep_log:
            self.events = []
            self._impacts.clear()
        for w in range(len(self.bodies)):
            phi, support = self.gap(w, q)
            if phi < -CONTACT_TOL:
                file, _, line = (self.sources[w] if self.sources else "").rpartition(":")
                raise UniverseError(f"wheel '{self.names[w]}' of '{self.multibody}' starts {-phi:.3g} m inside the "
                                    f"ground '{support.name}' (its gap, m)", file or None,
                                    int(line) if line.isdigit() else None, float(phi))
            if phi <= CONTACT_TOL:
                self.support[w] = support
        return self._project(q, v)

    def configuration(self):
        """What ``restore`` needs to continue exactly: the supports and the length of the log."""
        return dict(self.support), len(self.events), tuple(self._impacts)

    def restore(self, configuration):
        support, n_events, impacts = configuration
        self.support, self.events, self.recent = dict(support), self.events[:n_events], []
        self._impacts = deque(impacts)

    def _project(self, q, v):
        wheels, disks = self.on_ground()
        return project(self.model, self.data, q, v, disks) if wheels else (q, v)

    # ---- dynamics ------------------------------------------------------------------------------------------
    def flow(self, q, v, tau, f_ext, s):
        """The continuous dynamics of the configuration over s: rolling (RK4 + projection) or free flight (RK4)."""
        wheels, disks = self.on_ground()
        if wheels:
            return step_rolling(self.model, self.data, q, v, tau, s, disks, self.gravity, f_ext)
        return step_rk4(self.model, self.data, q, v, tau, s, f_ext=f_ext, gravity=self.gravity)

    def normal_forces(self, q, v, tau, f_ext):
        """{wheel: λ (3,)} of the wheels on the ground (3.20, base axes, N)."""
        wheels, disks = self.on_ground()
        if not wheels:
            return {}
        key = (tuple((w, self.support[w].normal.tobytes(), self.support[w].point.tobytes()) for w in wheels),
               q.tobytes(), v.tobytes(), tau.tobytes(), None if f_ext is None else f_ext.tobytes())
        if self._forces[0] != key:                   # the same state is read again at the next step's start
            lam = rolling_dynamics(self.model, self.data, q, v, tau, disks, self.gravity, f_ext)[1].reshape(-1, 3)
            self._forces = (key, dict(zip(wheels, lam)))
        return self._forces[1]

    def _watch(self, q, v, tau, f_ext):
        """{(kind, wheel): value} of every event function at (q, v) (module docstring)."""
        out = {}
        for w, lam in self.normal_forces(q, v, tau, f_ext).items():
            out[("force", w)] = lam @ self.support[w].normal
            out[("edge", w)] = self.ground.margin(self.support[w], *self.disk(w, q), self.radii[w])
            if self.support[w].face != EDGE:              # on an edge's tangent plane: no face to leave out
                out[("kerb", w)] = self.gap(w, q, exclude=self.support[w])[0]
        for w in range(len(self.bodies)):
            if w not in self.support:
                out[("gap", w)] = self.gap(w, q)[0]
        return out

    # ---- the step ------------------------------------------------------------------------------------------
    def step(self, q, v, tau, f_ext, t, dt):
        """(q, v) after δt from time t, every event on the way applied and logged (``recent``: this step's)."""
        self.recent, end = [], t + dt
        q, v = self._release(q, v, tau, f_ext, t)
        while end - t > TIME_TOL:
            q1, v1 = self.flow(q, v, tau, f_ext, end - t)
            crossed = [key for key, value in self._watch(q1, v1, tau, f_ext).items()
                       if value < (-GAP_TOL if key[0] in GAPS else 0.0)]       # a gap within GAP_TOL: grazing
            if not crossed:
                q, v, t = q1, v1, end
                break
            start = self._watch(q, v, tau, f_ext)
            (s, residual), key = min((self._root(key, q, v, tau, f_ext, end - t, start[key], t), key)
                                     for key in crossed)
            if s > 0.0:
                q, v = self.flow(q, v, tau, f_ext, s)
            t += s
            q, v = self._event(key, q, v, tau, f_ext, t, residual)
        lam = self.normal_forces(q, v, tau, f_ext)
        self.force[:] = 0.0
        for w, f in lam.items():
            self.force[w] = f
        return q, v

    def _root(self, key, q, v, tau, f_ext, h, f0, t):
        """(s*, f(s*)): s* in [0, h] where the event function ``key`` crosses zero (Brent); an event already
        crossed at the start (f0 < 0) happens at once, but a wheel within ``GAP_TOL`` of the ground (it has just
        left it or bounced) is taken as just above it."""
        if f0 < 0.0:
            if key[0] not in GAPS or f0 < -GAP_TOL:
                return 0.0, f0
            f0 = GAP_TOL

        def f(s):
            return self._watch(*self.flow(q, v, tau, f_ext, s), tau, f_ext)[key] if s > 0.0 else f0

        kind, w = key
        try:
            s = brentq(f, 0.0, h, xtol=TIME_TOL, rtol=4 * np.finfo(float).eps, maxiter=200)
        except RuntimeError as exc:
            raise self._fault(f"the {kind} event of wheel '{self.names[w]}' was not located ({exc})", t, None)
        tol, residual = (FORCE_TOL if kind == "force" else GAP_TOL), float(f(s))
        if abs(residual) > tol:
            raise self._fault(f"root finding on the {kind} of wheel '{self.names[w]}' did not converge: it jumps "
                              f"to {residual:.3g} at t = {t + s:.9f} s", t + s, residual)
        return s, residual

    def _event(self, key, q, v, tau, f_ext, t, residual):
        kind, w = key
        if kind == "gap":
            return self._collide(w, q, v, t, residual)
        if kind == "kerb":
            return self._collide(w, q, v, t, residual, self.gap(w, q, exclude=self.support[w])[1])
        released = self.support.pop(w)
        if kind == "force":
            self._check_separates(w, released, q, v, tau, f_ext, t)
        self._log(t, "lift-off", [w], kind, q, v, v, residual=residual)
        q, v = self._project(q, v)
        return self._release(q, v, tau, f_ext, t)

    def _release(self, q, v, tau, f_ext, t):
        """Wheels with λ_N < 0 leave the ground, the most negative first, until every λ_N ≥ 0."""
        while True:
            lam = {w: f @ self.support[w].normal for w, f in self.normal_forces(q, v, tau, f_ext).items()}
            if not lam or min(lam.values()) >= 0.0:
                return q, v
            w = min(lam, key=lam.get)
            self._check_separates(w, self.support.pop(w), q, v, tau, f_ext, t)
            self._log(t, "lift-off", [w], "force", q, v, v, residual=lam[w])

    def _check_separates(self, w, support, q, v, tau, f_ext, t):
        """A wheel released for λ_N < 0 must move away: Φ̈ = N·(J a + J̇v) ≥ 0 in the configuration without it.
        Releasing its no-slip rows too can make it sink (their forces were not zero): ideal rolling contact then
        has no consistent motion (a Painlevé-like paradox; friction limits would let it slip), and the run stops
        rather than chatter."""
        wheels, disks = self.on_ground()
        if wheels:
            a = rolling_dynamics(self.model, self.data, q, v, tau, disks, self.gravity, f_ext)[0]
        else:
            a = aba(self.model, self.data, q, v, tau, f_ext, gravity=self.gravity)
        own = self._rolling(w, support)
        sink = support.normal @ (own.jacobian(self.model, self.data, q) @ a + own.jacobian_rate(self.model, self.data,
                                                                                                   q, v))
        if sink < -ACC_TOL:
            raise self._fault(f"wheel '{self.names[w]}' has λ_N < 0 on the ground but would sink in the air "
                              f"(gap acceleration {sink:.3g} m/s²): ideal rolling contact has no consistent "
                              f"motion here (Painlevé-like: its no-slip forces were not zero)", t, float(sink))

    def _collide(self, w, q, v, t, residual, obstacle=None):
        """The impact of wheel w (module docstring); the wheels that end with γ_N⁺ ≈ 0 are on the ground.
        ``obstacle``: the support a wheel on the ground ran into (a kerb), which replaces its own."""
        before, support = dict(self.support), dict(self.support)
        if obstacle is not None:
            support[w] = obstacle
        M = crba(self.model, self.data, q)
        rows = {}
        for i in range(len(self.bodies)):      # w, the wheels on the ground, and those touching and approaching
            phi, s = (0.0, support[i]) if i in support else self.gap(i, q)
            if s is None:                      # nothing within reach
                continue
            J = self._rolling(i, s).jacobian(self.model, self.data, q)
            row = contact_frame(s.normal, self.disk(i, q)[1]) @ J
            if i == w or i in support or (phi <= GAP_TOL and row[0] @ v < 0.0):
                support[i], rows[i] = s, row
        tried = predict_correct(M, rows, self.restitution, v, sorted(support))
        final = tried[-1]
        scale = max(1.0, float(np.abs(v).max()))
        self.support = {i: support[i] for i in final.contacts if rows[i][0] @ final.v <= 1e-9 * scale}
        predictions = tuple((tuple(self.names[i] for i in p.contacts), p.impulse.copy(), p.accepted)
                            for p in tried if p.contacts)
        hit = [w] + sorted(set(support) - set(before) - {w})             # w and the wheels hitting with it
        self._log(t, "collision", hit, "gap" if obstacle is None else "kerb", q, v, final.v, predictions, residual)
        for i in sorted(set(before) - set(self.support)):                 # released by the impact (Test 4)
            self._log(t, "lift-off", [i], "impulse", q, final.v, final.v)
        self._zeno(w, t)
        return self._project(q, final.v)

    def _zeno(self, w, t):
        self._impacts.append(t)
        while self._impacts and self._impacts[0] < t - ZENO_WINDOW:
            self._impacts.popleft()
        if len(self._impacts) > ZENO_IMPACTS:
            raise self._fault(f"Zeno sequence: {len(self._impacts)} impacts within {ZENO_WINDOW:g} s (the last "
                              f"of wheel '{self.names[w]}'); the run stops here", t, len(self._impacts))

    def _log(self, t, kind, wheels, cause, q, v_minus, v_plus, predictions=(), residual=0.0):
        on = tuple(self.names[i] for i in sorted(self.support))
        energy = (kinetic_energy(self.model, self.data, q, v_minus), kinetic_energy(self.model, self.data, q, v_plus))
        event = WheelEvent(float(t), kind, "+".join(self.names[i] for i in wheels), cause, on, predictions, energy,
                           float(residual))
        self.events.append(event)
        self.recent.append(event)

    def _fault(self, message, t, value):
        return SimulationError(f"wheel events of '{self.multibody}' at t = {t:.9f} s: {message}", value=value)
