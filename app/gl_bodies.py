"""One OpenGL draw call for many rigid bodies: ``BodyMeshItem``.

The triangles of every body are uploaded once, in the body's own frame, each vertex tagged with the index of
its body. Moving the bodies only uploads their world placements as a uniform array of 4x4 matrices; the
vertex shader applies ``x_world = M[body] x_body`` (so nothing is rebuilt per frame, and a humanoid of 33
links is one draw call instead of 50). Lighting is Blinn-Phong with the universe's lights (directional,
world frame) plus a weak headlight so that no side of a body is black.
"""
from __future__ import annotations

import numpy as np
from OpenGL import GL
from OpenGL.GL import shaders
from pyqtgraph.opengl import GLGraphicsItem

MAX_BODIES = 60     # mat4 uniforms per draw: 960 floats, within every desktop GL's vertex uniform budget
MAX_LIGHTS = 4


def vertex_shader(nlights: int) -> str:
    """Gouraud shading: lighting per vertex (a software renderer shades ~50k vertices much faster than a
    million pixels of per-pixel lighting)."""
    return f"""
uniform mat4 u_mvp;
uniform mat4 u_body[{MAX_BODIES}];
uniform float u_highlight;
uniform vec3 u_eye;
uniform vec3 u_ambient;
uniform vec3 u_light_dir[{MAX_LIGHTS}];
uniform vec3 u_light_diffuse[{MAX_LIGHTS}];
uniform vec3 u_light_specular[{MAX_LIGHTS}];
attribute vec3 a_position;
attribute vec3 a_normal;
attribute vec4 a_color;
attribute float a_body;
varying vec4 v_color;
void main() {{
    int b = int(a_body + 0.5);
    vec4 world = u_body[b] * vec4(a_position, 1.0);
    vec3 n = normalize((u_body[b] * vec4(a_normal, 0.0)).xyz);
    vec3 to_eye = normalize(u_eye - world.xyz);
    if (dot(n, to_eye) < 0.0) n = -n;
    vec4 albedo = abs(a_body - u_highlight) < 0.5 ? mix(a_color, vec4(1.0, 0.85, 0.2, a_color.a), 0.45) : a_color;
    vec3 rgb = (u_ambient + 0.25 * max(dot(n, to_eye), 0.0)) * albedo.rgb;
    for (int i = 0; i < {nlights}; ++i) {{
        float diffuse = max(dot(n, u_light_dir[i]), 0.0);
        float specular = pow(max(dot(n, normalize(u_light_dir[i] + to_eye)), 0.0), 32.0);
        rgb += diffuse * u_light_diffuse[i] * albedo.rgb + 0.3 * specular * u_light_specular[i];
    }}
    v_color = vec4(rgb, albedo.a);
    gl_Position = u_mvp * world;
}}
"""


FRAGMENT_SHADER = """
varying vec4 v_color;
void main() {
    gl_FragColor = v_color;
}
"""


class Lighting:
    """World-frame directional lights as the shader reads them (a Light's position is its direction when
    w = 0, and the direction from the origin to it when w = 1)."""

    def __init__(self, lights=()):
        self.direction = np.zeros((MAX_LIGHTS, 3), np.float32)
        self.diffuse = np.zeros((MAX_LIGHTS, 3), np.float32)
        self.specular = np.zeros((MAX_LIGHTS, 3), np.float32)
        self.ambient = np.zeros(3, np.float32)
        for i, light in enumerate(tuple(lights)[:MAX_LIGHTS]):
            d = np.asarray(light.position[:3], float)
            self.direction[i] = d / (np.linalg.norm(d) or 1.0)
            self.diffuse[i] = light.diffuse[:3]
            self.specular[i] = light.specular[:3]
            self.ambient += np.asarray(light.ambient[:3], np.float32)
        self.count = min(len(tuple(lights)), MAX_LIGHTS)
        if self.count == 0:
            self.ambient[:] = 0.35


class BodyMeshItem(GLGraphicsItem.GLGraphicsItem):
    """Triangles of up to ``MAX_BODIES`` bodies drawn in one call.

    ``vertices``/``normals`` (n, 3) in their body frame, ``colors`` (n, 4) floats in [0, 1], ``body`` (n,) the
    index of each vertex's body in [0, nbodies), ``faces`` (m, 3).
    """

    def __init__(self, vertices, normals, colors, body, faces, nbodies: int, lighting: Lighting,
                 translucent: bool = False):
        super().__init__()
        if nbodies > MAX_BODIES:
            raise ValueError(f"a BodyMeshItem draws at most {MAX_BODIES} bodies, got {nbodies}")
        self.setGLOptions("translucent" if translucent else "opaque")
        self.translucent = translucent
        self._arrays = {"a_position": np.ascontiguousarray(vertices, np.float32),
                        "a_normal": np.ascontiguousarray(normals, np.float32),
                        "a_color": np.ascontiguousarray(colors, np.float32),
                        "a_body": np.ascontiguousarray(body, np.float32)}
        self._faces = np.ascontiguousarray(faces, np.uint32)
        self._matrices = np.tile(np.eye(4, dtype=np.float32), (MAX_BODIES, 1, 1))
        self.nbodies = nbodies
        self.lighting = lighting
        self.highlight = -1.0
        self._program = self._buffers = None

    def set_placements(self, R, p):
        """Body placements in the world: ``R`` (nbodies, 3, 3), ``p`` (nbodies, 3). The shader reads
        column-major matrices, so the transposes are stored: M^T = [[R^T, 0], [p^T, 1]]."""
        self._matrices[:self.nbodies, :3, :3] = np.transpose(R, (0, 2, 1))
        self._matrices[:self.nbodies, 3, :3] = p
        self.update()

    def set_highlight(self, body: int):
        self.highlight = float(body)
        self.update()

    def release_gl(self):
        """Free the program and buffers (call with the view's OpenGL context current)."""
        if self._buffers:
            GL.glDeleteBuffers(len(self._buffers), np.array(list(self._buffers.values()), np.uint32))
            GL.glDeleteProgram(self._program)
        self._program = self._buffers = None

    def _upload(self):
        self._program = shaders.compileProgram(shaders.compileShader(vertex_shader(self.lighting.count),
                                                                     GL.GL_VERTEX_SHADER),
                                               shaders.compileShader(FRAGMENT_SHADER, GL.GL_FRAGMENT_SHADER))
        GL.glBindAttribLocation(self._program, 0, "a_position")  # some drivers draw only with attribute 0 on
        GL.glLinkProgram(self._program)
        self._buffers = {}
        for name, array in list(self._arrays.items()) + [("faces", self._faces)]:
            target = GL.GL_ELEMENT_ARRAY_BUFFER if name == "faces" else GL.GL_ARRAY_BUFFER
            self._buffers[name] = GL.glGenBuffers(1)
            GL.glBindBuffer(target, self._buffers[name])
            GL.glBufferData(target, array.nbytes, array, GL.GL_STATIC_DRAW)
            GL.glBindBuffer(target, 0)

    def paint(self):
        if self._faces.size == 0:
            return
        self.setupGLState()
        if self._program is None:
            self._upload()
        program, light = self._program, self.lighting
        GL.glUseProgram(program)
        eye = self.view().cameraPosition()
        GL.glUniformMatrix4fv(GL.glGetUniformLocation(program, "u_mvp"), 1, False,
                              np.array(self.mvpMatrix().data(), np.float32))
        GL.glUniformMatrix4fv(GL.glGetUniformLocation(program, "u_body"), MAX_BODIES, False, self._matrices)
        GL.glUniform1f(GL.glGetUniformLocation(program, "u_highlight"), self.highlight)
        GL.glUniform3f(GL.glGetUniformLocation(program, "u_eye"), eye.x(), eye.y(), eye.z())
        GL.glUniform3fv(GL.glGetUniformLocation(program, "u_ambient"), 1, light.ambient)
        GL.glUniform3fv(GL.glGetUniformLocation(program, "u_light_dir"), MAX_LIGHTS, light.direction)
        GL.glUniform3fv(GL.glGetUniformLocation(program, "u_light_diffuse"), MAX_LIGHTS, light.diffuse)
        GL.glUniform3fv(GL.glGetUniformLocation(program, "u_light_specular"), MAX_LIGHTS, light.specular)
        enabled = []
        for name, array in self._arrays.items():
            loc = GL.glGetAttribLocation(program, name)
            if loc < 0:
                continue
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._buffers[name])
            GL.glVertexAttribPointer(loc, array.shape[1] if array.ndim == 2 else 1, GL.GL_FLOAT, False, 0, None)
            GL.glEnableVertexAttribArray(loc)
            enabled.append(loc)
        GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, self._buffers["faces"])
        if self.translucent:   # a translucent layer over the very same surfaces (collision = visual) still shows
            GL.glDepthFunc(GL.GL_LEQUAL)
        GL.glDrawElements(GL.GL_TRIANGLES, self._faces.size, GL.GL_UNSIGNED_INT, None)
        GL.glDepthFunc(GL.GL_LESS)
        GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, 0)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, 0)
        for loc in enabled:
            GL.glDisableVertexAttribArray(loc)
        GL.glUseProgram(0)
