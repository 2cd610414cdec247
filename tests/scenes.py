"""Scenes shared by the test modules and tests/contact/data/record_hard_problems.py (``from tests.scenes import
falling``)."""

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


def cubes():
    """Ten cubes dropped apart, tilted and spinning, on the ground (μ = 0.6): they land, slide and come to rest
    (tests/engines/test_free_bodies.py; record_hard_problems.py's cube_sliding)."""
    cubes = "".join(f'<Body name="c{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Material>m</Material>'
                    f'<Rotation angle="{7 * i}" x="1" y="1" z="0"/><Translation x="{0.3 * i}" y="0" z="0.1"/>'
                    f'<LinearVelocity>{0.1 * i} 0.3 0</LinearVelocity><AngularVelocity>0 0 {i}</AngularVelocity>'
                    f'</Body>' for i in range(10))
    return (f'<Universe><Material name="m" friction="0.6"/>{cubes}'
            f'<Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body></Universe>')
