"""BIP's boundary states from the thesis' gait data (Chessé 2002, Annex A, L4331-4609; seed 003 §3.3, §5.H).

Absolute angles θ_i of the segments' X_i from X0 (forward) towards Y0 (up), the thesis' q_i, on Figure A-1's
double-support chain: O1 the rear toe at the origin, S1 rear foot (toe → ankle, r1), S2 shank, S3 thigh up to
the hip O4; S4 thigh, S5 shank down to the front ankle O6, S6 front foot (ankle → heel B1, r6); S7 the trunk.
Each leg is a two-link inverse kinematics with the knee bent forward (Figure A-2):

    a = x − r C,  b = y − r S (the known foot),  c = (a² + b² + r_u² − r_l²) / 2 r_u,  α = atan(b / a),
    rear:  θ3 = α + acos(c cos α / a)    (A.3, A.14);      front:  θ5 = α − acos(c cos α / a)    (A.9, A.19)

and the rates solve the derivatives of the hip's position (A.4, A.16, A.21; the printed closed forms A.17-A.18
lost terms, so the 2×2 systems are solved as they stand).  ``single_support`` maps a double support's end (the
swing foot on its toe, turning at ω1) and the next one's start (the heel down at δ) onto
assets/robots/bip_sagittal.xml rooted at the stance foot's toe: the thesis' re-indexing DS → SS (L3488-3520)
exchanges the legs, the front foot of the double support becoming the rear (root) foot of ours.
"""
from __future__ import annotations

import math

import numpy as np

R = (0.188, 0.41, 0.41, 0.41, 0.41, 0.29)        # r1..r6, m (Table III-3)
ANKLE_HEIGHT = 0.1                                # m: the robot file's foot (the thesis gives none)
BETA_P = math.asin(ANKLE_HEIGHT / R[5])           # the foot's angle at the heel
GAMMA_P = math.asin(ANKLE_HEIGHT / R[0])          # ... at the toe
L_PIED = math.sqrt(R[5] ** 2 - ANKLE_HEIGHT ** 2) + math.sqrt(R[0] ** 2 - ANKLE_HEIGHT ** 2)
JOINTS = ("rear_toe", "rear_ankle", "rear_knee", "front_hip", "front_knee", "front_ankle", "rear_hip")


def _two_links(a, b, r_upper, r_lower, sign):
    """(θ_lower, θ_upper) with r_lower (C_l, S_l) + r_upper (C_u, S_u) = (a, b): θ_u = α + sign acos(c cos α / a)."""
    alpha = math.atan(b / a)
    c = (a * a + b * b + r_upper ** 2 - r_lower ** 2) / (2 * r_upper)
    upper = alpha + sign * math.acos(c * math.cos(alpha) / a)
    lower = math.atan2((b - r_upper * math.sin(upper)) / r_lower, (a - r_upper * math.cos(upper)) / r_lower)
    return lower, upper


def _legs(lpas, hip, theta1, theta6):
    """θ1..θ6 with the rear foot at θ1 on the toe O1 = 0, the front foot at θ6 with its heel B1 on
    (lpas − l_pied, 0) and the hip O4 at ``hip`` (A.2-A.3, A.8-A.10)."""
    r1, r2, r3, r4, r5, r6 = R
    x, y = hip
    t2, t3 = _two_links(x - r1 * math.cos(theta1), y - r1 * math.sin(theta1), r3, r2, +1.0)
    a = lpas - L_PIED - r6 * math.cos(theta6) - x                 # O4 + r4 X4 + r5 X5 = B1 − r6 X6
    b = -r6 * math.sin(theta6) - y
    t4, t5 = _two_links(a, b, r5, r4, -1.0)
    return np.array([theta1, t2, t3, t4, t5, theta6])


def _rates(theta, hip_velocity, rate1, rate6=None):
    """θ̇2, θ̇3 from O4's velocity along the rear leg (A.4, A.16), θ̇4, θ̇5 along the front one with its heel B1
    still (A.8 differentiated); θ̇1 given, θ̇6 given or ``None``: the ankle not turning, θ̇6 = θ̇5 (A.11-A.13)."""
    r1, r2, r3, r4, r5, r6 = R
    s, c = np.sin(theta), np.cos(theta)
    u, v = hip_velocity
    rear = np.linalg.solve([[-r2 * s[1], -r3 * s[2]], [r2 * c[1], r3 * c[2]]],
                           [u + r1 * s[0] * rate1, v - r1 * c[0] * rate1])
    locked = rate6 is None                                        # O4 = B1 − r4 X4 − r5 X5 − r6 X6
    A = [[r4 * s[3], r5 * s[4] + locked * r6 * s[5]], [-r4 * c[3], -r5 * c[4] - locked * r6 * c[5]]]
    b = [u, v] if locked else [u - r6 * s[5] * rate6, v + r6 * c[5] * rate6]
    front = np.linalg.solve(A, b)
    return np.array([rate1, *rear, *front, front[1] if locked else rate6])


def double_support_start(lpas, hip, hip_velocity, delta):
    """(θ, θ̇) (7,) at a double support's start: rear foot flat and still, front heel down at δ with the ankle
    not turning (A.11: θ̇6 = θ̇5), the trunk upright and still."""
    theta = _legs(lpas, hip, math.pi - GAMMA_P, BETA_P + delta - math.pi)
    return np.append(theta, math.pi / 2), np.append(_rates(theta, hip_velocity, 0.0), 0.0)


def double_support_end(lpas, hip, hip_velocity, theta1, omega1):
    """(θ, θ̇) (7,) at a double support's end: front foot flat and still, rear foot on its toe at θ1 turning at
    ω1 (A.14-A.22), the trunk upright and still."""
    theta = _legs(lpas, hip, theta1, BETA_P - math.pi)
    return np.append(theta, math.pi / 2), np.append(_rates(theta, hip_velocity, omega1, 0.0), 0.0)


def relative(theta):
    """Absolute angles θ1..θ7 → bip_sagittal.xml's joints (each relative to its parent; the trunk on S3)."""
    t = np.asarray(theta, float)
    return np.array([t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4], t[6] - t[2]])


def single_support(lpas, end_hip, end_velocity, theta1, omega1, start_hip, start_velocity, delta):
    """{joint: value} of q and v at a single support's start and end on bip_sagittal.xml, the stance toe at the
    origin: the start is the double support ending at (``end_hip``, ``end_velocity``, ``theta1``, ``omega1``)
    seen from its front toe (at x = lpas), the legs exchanged; the end, the next double support's start."""
    theta, rates = double_support_end(lpas, end_hip, end_velocity, theta1, omega1)
    # exchanged: our rear leg is its front one (reversed: + π), our front leg its rear one; the foot's ankle →
    # heel direction is its toe → ankle turned by β_p + γ_p (the triangle's exterior angle at the ankle)
    swapped = np.array([math.pi - GAMMA_P, theta[4] + math.pi, theta[3] + math.pi, theta[2] + math.pi,
                        theta[1] + math.pi, theta[0] + BETA_P + GAMMA_P, theta[6]])
    swapped_rates = np.array([0.0, rates[4], rates[3], rates[2], rates[1], rates[0], rates[6]])
    theta, rates = double_support_start(lpas, start_hip, start_velocity, delta)
    q_end, v_end = (relative(theta) + math.pi) % (2 * math.pi) - math.pi, relative(rates)
    q_start = q_end + (relative(swapped) - q_end + math.pi) % (2 * math.pi) - math.pi  # within π of the end
    return ({"start": dict(zip(JOINTS, q_start)), "end": dict(zip(JOINTS, q_end))},
            {"start": dict(zip(JOINTS, relative(swapped_rates))), "end": dict(zip(JOINTS, v_end))})
