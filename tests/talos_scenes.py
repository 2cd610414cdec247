"""Talos scenes shared by the test modules (``from tests.talos_scenes import falling``)."""

FALLING = """<Universe><Settings><Solver {solver}/></Settings>
  <Material name="floor" friction="0.9" restitution="0.0"/>
  <MultiBody name="talos"><File>package://example-robot-data/robots/talos_data/robots/talos_reduced.urdf</File>
    <FloatingBase>true</FloatingBase><Material>floor</Material><Joint name="root_joint" value="0 0 1.0935 0 0 0 1"/>
  </MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass><Material>floor</Material></Body></Universe>"""


def falling(solver_attributes):
    """Talos released 1.0935 m above the floor (its feet just above it), no controller, μ = 0.9; the <Solver>
    element's attributes as given (e.g. 'joint_limits="constraint"')."""
    return FALLING.format(solver=solver_attributes)
