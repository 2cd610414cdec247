"""Deformable soles: linear-elastic tetrahedral FEM condensed onto the contact nodes (seed 000 §3.8–3.9, thesis
§4.3–4.6). Not yet wired into the contact stage; ``compliance`` gives what it will add per collision group.

    material     Material(E, nu): Lamé constants (4.6), checked
    mesh         SoleMesh, sole_mesh (checks), top_face / bottom_surface node selections
    shapes       box_mesh (scikit-fem), two_layer_sole and rounded_sole (Gmsh)
    meshfile     read_mesh: a user's .msh / .vtu through meshio
    assembly     stiffness K by scikit-fem (4.8–4.9, per-element λ, μ)
    condensation condense(K, keep): K_c = K_cc − K_cn K_nn⁻¹ K_nc (4.14, 4.20), node recovery (4.22)
    sole         Sole, build_sole: K_c and K_c⁻¹ precomputed and cached on disk (cache)
    hybrid       contact weights P (4.23–4.29), compliance block and free-velocity shift (4.21, 4.32)
    strain       max_strain, SmallStrainWarning (small-strain validity, 4.4)
"""
from engine.deformable.condensation import Condensation, condense
from engine.deformable.hybrid import Weights, barycentric, compliance, contact_weights, distribution_matrix, node_forces
from engine.deformable.material import Material
from engine.deformable.mesh import SoleMesh, bottom_surface, sole_mesh, surface_nodes, top_face
from engine.deformable.meshfile import mesh_regions, read_mesh
from engine.deformable.shapes import THESIS_SOLE, box_mesh, gmsh_session, rounded_sole, two_layer_sole
from engine.deformable.sole import Sole, build_sole
from engine.deformable.strain import SMALL_STRAIN, SmallStrainWarning, check_small_strain, max_strain

__all__ = ["Condensation", "condense", "Weights", "barycentric", "compliance", "contact_weights",
           "distribution_matrix", "node_forces", "Material", "SoleMesh", "bottom_surface", "sole_mesh",
           "surface_nodes", "top_face", "mesh_regions", "read_mesh", "THESIS_SOLE", "box_mesh", "gmsh_session",
           "rounded_sole", "two_layer_sole", "Sole", "build_sole", "SMALL_STRAIN", "SmallStrainWarning",
           "check_small_strain", "max_strain"]
