"""Collision groups (seed 000 §3.2(d)): connected components of mobile multibodies linked by contacts.

Λ is block diagonal between groups, so each group gets its own Λ and its own solve: k separate cubes are k small
problems (cost linear in k) instead of one problem of size k (quadratic).
"""
from __future__ import annotations

import numpy as np


def collision_groups(n_multibodies: int, multibody_a: np.ndarray, multibody_b: np.ndarray) -> list:
    """Components of the graph whose nodes are multibodies and whose edges are contacts.

    ``multibody_a``/``multibody_b`` (nc,) give the two sides of each contact (-1 = a static body, which links
    nothing). Returns a list of (multibody indices, contact indices), both sorted, one per group that has
    contacts, in order of their smallest multibody.
    """
    parent = np.arange(n_multibodies)

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(multibody_a, multibody_b):
        if a >= 0 and b >= 0:
            ra, rb = find(a), find(b)
            parent[max(ra, rb)] = min(ra, rb)
    root_of_contact = np.array([find(a if a >= 0 else b) for a, b in zip(multibody_a, multibody_b)], dtype=int)
    groups = []
    for root in np.unique(root_of_contact):
        members = sorted(i for i in range(n_multibodies) if find(i) == root)
        groups.append((members, np.flatnonzero(root_of_contact == root)))
    return groups
