"""The single, validated, serialisable description of a run (`Config`), and its forms.

Import from here; the modules each do one job:
- `sections`: the pydantic sections (data kinds, model, loss, init, integrator, record);
- `models`: `Config` itself (construction, JSON, cache key, URL form, updates);
- `checks`: checks across fields and the server's size and compute limits;
- `errors`: `ConfigError` and the sentences that say what to change;
- `arrays`: uploaded arrays (strict validation, exact encoding, digests);
- `canonical`: canonical JSON, `NUMERICS_VERSION` and the cache key;
- `urlvalues`: dotted paths and values as URL text; `query`: whole configs in URLs.

Each module imports only modules before it in this order (no circle): arrays, sections,
errors, checks, canonical, urlvalues, models, query. The checks read a `Config` through the
`checks.Run` protocol, since `Config`'s validation calls them.
"""

from .arrays import array_digest
from .canonical import NUMERICS_VERSION
from .checks import (
    GF_MIN_STEPS,
    cross_field_errors,
    data_shape,
    gf_min_evaluations,
    labels_are_pm1,
)
from .errors import ConfigError, to_config_error
from .models import Config, field_annotation
from .query import config_from_query, field_error, from_query, to_query
from .sections import (
    DATA_CLASSES,
    DATA_KINDS,
    GENERATORS,
    LOSSES,
    ArrayData,
    ClustersData,
    DataConfig,
    DigitsData,
    FunctionData,
    GeneratedData,
    InitConfig,
    IntegratorConfig,
    LossConfig,
    ModelConfig,
    PointsData,
    RecordConfig,
    TeacherData,
    ThreePointData,
    TwoSignalsData,
    VectorsData,
)

__all__ = [
    "DATA_CLASSES",
    "DATA_KINDS",
    "GENERATORS",
    "GF_MIN_STEPS",
    "LOSSES",
    "NUMERICS_VERSION",
    "ArrayData",
    "ClustersData",
    "Config",
    "ConfigError",
    "DataConfig",
    "DigitsData",
    "FunctionData",
    "GeneratedData",
    "InitConfig",
    "IntegratorConfig",
    "LossConfig",
    "ModelConfig",
    "PointsData",
    "RecordConfig",
    "TeacherData",
    "ThreePointData",
    "TwoSignalsData",
    "VectorsData",
    "array_digest",
    "config_from_query",
    "cross_field_errors",
    "data_shape",
    "field_annotation",
    "field_error",
    "from_query",
    "gf_min_evaluations",
    "labels_are_pm1",
    "to_config_error",
    "to_query",
]
