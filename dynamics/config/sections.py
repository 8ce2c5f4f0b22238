"""The sections of a run's configuration, as frozen pydantic models with their ranges.

Conventions: h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu); a bias is an
appended input coordinate equal to 1; loss reduced by mean (1/n Σ) or sum; time is gradient-flow
time (GD: t = kη). Each data kind is its own section, told apart by `kind`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .arrays import FloatMatrix, FloatVector, array_digest, frozen, same_array

LOSSES = ("square", "logistic", "exponential")
DATA_KINDS = ("points", "clusters", "two_signals", "teacher", "three_point", "function",
              "digits", "vectors", "generated", "array")
GENERATORS = ("symmetric_separable", "orthogonal", "skew_xor", "relu_teacher", "linear_teacher")
FORMULA_CHARS = 200  # longest formula of a `function` data set


class Section(BaseModel):
    """A frozen group of settings: unknown keys and non-finite floats are refused, and −0.0
    is stored as 0.0 (they are the same setting: one run, one cache key)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _no_negative_zero(cls, v: Any) -> Any:
        if isinstance(v, float) and v == 0.0:
            return 0.0
        if isinstance(v, tuple) and any(isinstance(x, float) and x == 0.0 for x in v):
            return tuple(0.0 if isinstance(x, float) and x == 0.0 else x for x in v)
        return v


Finite = Annotated[float, Field(allow_inf_nan=False)]
Pos = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]


# ----------------------------------------------------------------------------- data
class _DataBase(Section):
    bias: bool = Field(False, description="append a constant coordinate 1 to every input")


class PointsData(_DataBase):
    """2D points given by angle (degrees), radius and label: the 'data angles' users edit."""

    kind: Literal["points"] = "points"
    angles_deg: tuple[Finite, ...] = (15.0, 75.0, 195.0, 255.0)
    radii: tuple[Pos, ...] = (1.0, 1.0, 1.0, 1.0)
    labels: tuple[Finite, ...] = (1.0, 1.0, -1.0, -1.0)


class ClustersData(_DataBase):
    """k cluster centres on the circle (angle, radius) with isotropic Gaussian noise; one label
    per cluster."""

    kind: Literal["clusters"] = "clusters"
    angles_deg: tuple[Finite, ...] = (20.0, 80.0, 210.0)
    labels: tuple[Finite, ...] = (1.0, 1.0, -1.0)
    radius: Pos = 1.0
    n_per: Annotated[int, Field(ge=1)] = 10
    noise: NonNeg = 0.1


class TwoSignalsData(_DataBase):
    """Wang & Ma: x₊ = ‖x₊‖(1, 0) labelled +1 and x₋ at `angle_deg` from it labelled −1; the
    loss weights x₊ by the class weight p (n₊/n₋ and a class weight are the same parameter)."""

    kind: Literal["two_signals"] = "two_signals"
    angle_deg: Annotated[float, Field(gt=0, lt=180, allow_inf_nan=False)] = 17.19
    p: Pos = 2.0
    norm_plus: Pos = 1.0
    norm_minus: Pos = 1.0
    n_per: Annotated[int, Field(ge=1)] = 1
    noise: NonNeg = 0.0


class TeacherData(_DataBase):
    """Chistikov et al.: x_i ~ N(μ, (ρ/d) I), μ uniform on the sphere, y_i = relu(⟨v*, x_i⟩).
    Centred: v* = μ, ρ = 1. Uncentred: v* = x₀/‖x₀‖ for an extra sample x₀, ρ = √2 − 1.
    Samples with some ∠(v*, x_i) ≥ 90° are redrawn."""

    kind: Literal["teacher"] = "teacher"
    d: Annotated[int, Field(ge=2)] = 16
    n: Annotated[int, Field(ge=1)] | None = None  # None: n = d, as in the paper
    scheme: Literal["centred", "uncentred"] = "centred"
    rho: Pos | None = None  # None: the scheme's value


class ThreePointData(_DataBase):
    """Boursier & Flammarion's Section 5 data: univariate x with a hidden bias (input (x, 1))."""

    kind: Literal["three_point"] = "three_point"
    bias: bool = True
    x: tuple[Finite, ...] = (-0.75, -0.5, 0.125)
    y: tuple[Finite, ...] = (1.1, 0.1, 0.8)


class FunctionData(_DataBase):
    """1-D regression: n inputs x in [x_min, x_max] (evenly spaced, or uniform draws from the
    run's seed) with targets y = formula(x), a bias 1 appended (Luo et al.'s and Zhou et al.'s
    1-D demos). The formula is an expression in x with + − * / ** and relu, abs, sin, cos, tan,
    tanh, exp, log, sqrt, min, max, pi (evaluated by `simpleeval`, never by Python's eval)."""

    kind: Literal["function"] = "function"
    bias: bool = True
    formula: Annotated[str, Field(min_length=1, max_length=FORMULA_CHARS)] = (
        "-relu(x) + relu(2*(x+0.3)) - relu(1.5*(x-0.4)) + relu(0.5*(x-0.8))")
    n: Annotated[int, Field(ge=1)] = 20
    x_min: Finite = -1.0
    x_max: Finite = 1.0
    spacing: Literal["even", "uniform"] = "even"


class DigitsData(_DataBase):
    """Two classes of scikit-learn's 8×8 digits (pixels/16), first class +1, second −1, centred
    by the mean over all used images (Min et al.)."""

    kind: Literal["digits"] = "digits"
    classes: tuple[Annotated[int, Field(ge=0, le=9)], Annotated[int, Field(ge=0, le=9)]] = (0, 1)
    n_per_class: Annotated[int, Field(ge=1)] | None = None  # None: all (about 180 each)
    centre: bool = True


class VectorsData(_DataBase):
    """Points of any dimension given by their coordinates, one row per point, with a label
    each: an explicit dataset held in the configuration, so a link carries it (unlike an
    upload). In a URL: `data.points=[[1,0,0],[0,1,0]]&data.labels=1,-1`."""

    kind: Literal["vectors"] = "vectors"
    points: tuple[tuple[Finite, ...], ...] = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                                              (0.0, 0.0, 1.0))
    labels: tuple[Finite, ...] = (1.0, -1.0, 1.0)


class GeneratedData(_DataBase):
    """Points of any dimension drawn by a named generator with its parameters (from the run's
    seed, so a link that names them rebuilds the same points):

    * `symmetric_separable`: n/2 points x = z + sign(⟨u, z⟩)·margin·u, z ~ N(0, I_d), labelled
      y = sign⟨u, x⟩ for a random unit vector u (so |⟨u, x⟩| ≥ margin: linearly separable
      through the origin), and their mirror images (−x, −y): symmetric data.
    * `orthogonal`: n ≤ d pairwise orthogonal inputs x_k = r_k q_k (q_k orthonormal columns of a
      random rotation, r_k uniform in [0.5, 1.5]); labels with alternating signs (first +),
      magnitudes uniform in [0.2, 1] (`labels` "real") or ±1 ("sign"), or (`labels`
      "dana") Dana et al.'s inputs x_k = r_k e_k with r_k ~ U[1, 2] along the axes and labels
      ±U[1, 2] with random signs.
    * `skew_xor` (Tsoy & Konstantinov): n/4 points in each of four blobs, Gaussian of std
      `noise` in every coordinate, truncated to radius 2√2·noise in the first two (their
      σ = 0.1/√2, radius 0.2), centred at ±e₁ (label −1) and ±(cos α, sin α, 0, …) (label +1),
      α = `angle_deg` (90: XOR).
    * `relu_teacher` (Kunin et al.): x uniform on the unit sphere of R^d, y = Σ_k s_k σ(⟨u_k,
      x⟩) for `teacher_width` neurons u_k uniform on the sphere, s_k = ±1.
    * `linear_teacher` (a noisy linear teacher; our setting for Boursier & Flammarion 2025):
      x ~ N(0, I_d), y = ⟨β*, x⟩ + noise·ξ with β* = (1, …, 1)/√d, ξ ~ N(0, 1); the
      linear function is σ(⟨β*, x⟩) − σ(−⟨β*, x⟩), two neurons.
    `noise` is the std of the blobs (skew_xor) or of the label noise (linear_teacher).
    """

    kind: Literal["generated"] = "generated"
    generator: Literal["symmetric_separable", "orthogonal", "skew_xor", "relu_teacher",
                       "linear_teacher"] = "symmetric_separable"
    n: Annotated[int, Field(ge=2)] = 20
    d: Annotated[int, Field(ge=1)] = 5
    margin: NonNeg = 0.1
    labels: Literal["sign", "real", "dana"] = "sign"
    angle_deg: Annotated[float, Field(gt=0, lt=180, allow_inf_nan=False)] = 90.0
    noise: NonNeg = 0.0
    teacher_width: Annotated[int, Field(ge=1, le=1000)] = 3


class ArrayData(_DataBase):
    """Data given directly (uploads): rows of X (n × d) and their labels y (n), held as
    read-only float64 arrays; equal when their bits are equal."""

    kind: Literal["array"] = "array"
    X: FloatMatrix = Field(default_factory=lambda: frozen([[1.0, 0.0], [0.0, 1.0]]))
    y: FloatVector = Field(default_factory=lambda: frozen([1.0, -1.0]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayData):
            return NotImplemented
        return (self.bias == other.bias and same_array(self.X, other.X)
                and same_array(self.y, other.y))

    def __hash__(self) -> int:
        return hash((self.bias, array_digest(self.X), array_digest(self.y)))


DataConfig = Annotated[
    Union[PointsData, ClustersData, TwoSignalsData, TeacherData, ThreePointData,  # noqa: UP007
          FunctionData, DigitsData, VectorsData, GeneratedData, ArrayData],
    Field(discriminator="kind"),
]
DATA_CLASSES: dict[str, type[_DataBase]] = {
    "points": PointsData, "clusters": ClustersData, "two_signals": TwoSignalsData,
    "teacher": TeacherData, "three_point": ThreePointData, "function": FunctionData,
    "digits": DigitsData,
    "vectors": VectorsData, "generated": GeneratedData, "array": ArrayData,
}


# ----------------------------------------------------------------------------- the rest
class ModelConfig(Section):
    """h(x) = c·m^(−p) Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu), width m, output power p
    (`output_power`: 1 is Dana et al.'s 1/m, ½ the NTK's 1/√m; Luo et al.'s 1/α with
    α = m^p/c). `output_scale` is the factor c·m^(−p) the kernels use (c itself when p = 0)."""

    width: Annotated[int, Field(ge=1)] = 50
    gamma: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    c: Pos = 1.0
    train_output: bool = True
    output_power: Annotated[float, Field(ge=0, le=3, allow_inf_nan=False)] = 0.0

    @property
    def output_scale(self) -> float:
        """c·m^(−p): the factor in front of the sum (exactly c when p = 0)."""
        if self.output_power == 0.0:
            return float(self.c)
        return float(self.c) * float(self.width) ** (-float(self.output_power))


class LossConfig(Section):
    """square ½(ŷ−y)², logistic ln(1+e^{−yŷ}), exponential e^{−yŷ}; L = (1/n or 1) Σ_i s_i ℓ_i."""

    kind: Literal["square", "logistic", "exponential"] = "square"
    reduction: Literal["mean", "sum"] = "mean"


class InitConfig(Section):
    """Entry std σ₀ = scale (none), scale/√m (sqrt_m), scale/√(dm) (sqrt_dm).

    - balanced: w ~ N(0, σ₀² I), a_j = ±‖w_j‖ (random sign);
    - gaussian: w entries N(0, (σ₀ m^−w_power)²), a_j ~ N(0, (σ₀ m^−a_power)²) independent
      (Luo et al.'s β₂ and β₁ with the powers);
    - dominated: w entries U(−σ₀, σ₀), a_j = ±σ₀√d (|a_j| > ‖w_j‖);
    - fixed_output: w ~ N(0, σ₀² I), a_j = ±output_value / (1, √m or m by output_norm), not
      trained;
    - exp_margin (Dana et al.): w ~ N(0, σ₀² I), a_j = ±(‖w_j‖ + output_value·E_j),
      E_j ~ Exp(1);
    - tau_delta (Kunin et al.): w_j = ‖w‖ u_j, u_j uniform on the sphere, a_j = ±|a| with
      |a|‖w‖ = τ² (τ = σ₀) and η_w a² − η_a ‖w‖² = δ (`imbalance`; η the integrator's
      per-layer rates).
    `mirror`: neurons in pairs (w_j, a_j), (w_j, −a_j), so h ≡ 0 at t = 0 (Kunin et al.'s
    symmetrised start, Luo et al.'s ASI); needs an even width.
    """

    scheme: Literal["balanced", "gaussian", "dominated", "fixed_output", "exp_margin",
                    "tau_delta"] = "balanced"
    scale: Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)] = 1e-3
    normalisation: Literal["none", "sqrt_m", "sqrt_dm"] = "sqrt_m"
    output_value: Pos = 1.0
    output_norm: Literal["none", "sqrt_m", "m"] = "sqrt_m"
    imbalance: Annotated[float, Field(ge=-1e6, le=1e6, allow_inf_nan=False)] = 0.0
    a_power: Annotated[float, Field(ge=-2, le=4, allow_inf_nan=False)] = 0.0
    w_power: Annotated[float, Field(ge=-2, le=4, allow_inf_nan=False)] = 0.0
    mirror: bool = False


class IntegratorConfig(Section):
    """gd: fixed step lr, t = k·lr, steps = round(t_end/lr). gf: adaptive Bogacki–Shampine 3(2)
    on dθ/dt = −D∇L with error control (rtol, atol; atol None = rtol · 10⁻³ · max|θ₀|,
    θ₀ the initial weights: `kernels.default_atol`).
    Per-layer rates D = diag(lr_w on every w_j, lr_a on every a_j) (Kunin et al.'s η_w, η_a;
    GD steps lr·lr_w and lr·lr_a); 1 and 1: plain gradient flow."""

    method: Literal["gd", "gf"] = "gf"
    t_end: Pos = 60.0
    lr: Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)] = 1e-2
    lr_w: Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)] = 1.0
    lr_a: Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)] = 1.0
    rtol: Annotated[float, Field(ge=1e-13, le=0.1, allow_inf_nan=False)] = 1e-6
    atol: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    max_steps: Annotated[int, Field(ge=1)] = 2_000_000


class RecordConfig(Section):
    """Snapshots: `frames` times, log- or linearly spaced from t_first to t_end, plus t = 0.
    Dense scalars (loss, rates) on a `scalars`-point grid of the same spacing."""

    frames: Annotated[int, Field(ge=2)] = 120
    spacing: Literal["log", "linear"] = "log"
    t_first: Pos | None = None  # None: t_end·1e-4 (log) or t_end/frames (linear)
    scalars: Annotated[int, Field(ge=10)] = 800
    plane: Literal["auto", "pca", "axes", "signals", "teacher"] = "auto"
