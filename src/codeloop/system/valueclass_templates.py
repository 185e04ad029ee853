"""The `__init__` templates of codeloop's value classes, one function a shape of fields
(codeloop.system.valueclass takes their code and puts the fields' names in), written out so
that this module's .pyc carries them compiled and no run compiles their source.

Do not edit: `python -m codeloop.testing.valueclass_writer` writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for ruff and mypy: valueclass gives each class's __init__ these globals
    _vc_default_4: Any = None
    _vc_factory: Any = None
    _vc_make_0: Any = None
    _vc_make_1: Any = None
    _vc_make_2: Any = None
    _vc_make_3: Any = None
    _vc_make_4: Any = None
    _vc_make_5: Any = None
    _vc_make_6: Any = None
    _vc_make_7: Any = None
    _vc_make_8: Any = None
    _vc_make_9: Any = None
    _vc_make_10: Any = None
    _vc_make_11: Any = None
    _vc_make_12: Any = None
    _vc_make_13: Any = None
    _vc_make_14: Any = None
    _vc_make_15: Any = None
    _vc_make_16: Any = None
    _vc_make_17: Any = None
    _vc_make_18: Any = None
    _vc_make_19: Any = None
    _vc_make_20: Any = None
    _vc_make_21: Any = None
    _vc_make_22: Any = None
    _vc_make_23: Any = None
    _vc_make_24: Any = None
    _vc_make_25: Any = None
    _vc_make_26: Any = None
    _vc_make_27: Any = None
    _vc_make_28: Any = None
    _vc_make_29: Any = None
    _vc_make_30: Any = None
    _vc_make_31: Any = None
    _vc_make_32: Any = None
    _vc_make_33: Any = None
    _vc_make_34: Any = None
    _vc_make_35: Any = None
    _vc_make_36: Any = None
    _vc_make_37: Any = None
    _vc_make_38: Any = None
    _vc_make_39: Any = None
    _vc_make_40: Any = None
    _vc_make_41: Any = None
    _vc_make_42: Any = None
    _vc_make_43: Any = None
    _vc_make_44: Any = None
    _vc_make_45: Any = None
    _vc_make_46: Any = None
    _vc_put: Any = None


def frozen_kkkkkk(
    _vc_self: Any,
    *,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)


def frozen_kkkkkkkkkkk(
    _vc_self: Any,
    *,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)


def frozen_none(
    _vc_self: Any,
) -> None:
    pass


def frozen_p(
    _vc_self: Any,
    _vc_f0: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)


def frozen_pp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)


def frozen_ppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)


def frozen_pppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)


def frozen_ppppd(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_default_4 is _vc_factory else _vc_default_4)


def frozen_ppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)


def frozen_pppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)


def frozen_ppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)


def frozen_pppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)


def frozen_ppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)


def frozen_pppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)


def frozen_ppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)


def frozen_pppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)


def frozen_ppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)


def frozen_pppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)


def frozen_ppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)
    _vc_put(_vc_self, "_vc_f16", _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16)


def frozen_pppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
    _vc_f17: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)
    _vc_put(_vc_self, "_vc_f16", _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16)
    _vc_put(_vc_self, "_vc_f17", _vc_make_17() if _vc_f17 is _vc_factory else _vc_f17)


def frozen_ppppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
    _vc_f17: Any,
    _vc_f18: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)
    _vc_put(_vc_self, "_vc_f16", _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16)
    _vc_put(_vc_self, "_vc_f17", _vc_make_17() if _vc_f17 is _vc_factory else _vc_f17)
    _vc_put(_vc_self, "_vc_f18", _vc_make_18() if _vc_f18 is _vc_factory else _vc_f18)


def frozen_pppppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
    _vc_f17: Any,
    _vc_f18: Any,
    _vc_f19: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)
    _vc_put(_vc_self, "_vc_f16", _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16)
    _vc_put(_vc_self, "_vc_f17", _vc_make_17() if _vc_f17 is _vc_factory else _vc_f17)
    _vc_put(_vc_self, "_vc_f18", _vc_make_18() if _vc_f18 is _vc_factory else _vc_f18)
    _vc_put(_vc_self, "_vc_f19", _vc_make_19() if _vc_f19 is _vc_factory else _vc_f19)


def frozen_pppppppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
    _vc_f17: Any,
    _vc_f18: Any,
    _vc_f19: Any,
    _vc_f20: Any,
    _vc_f21: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)
    _vc_put(_vc_self, "_vc_f16", _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16)
    _vc_put(_vc_self, "_vc_f17", _vc_make_17() if _vc_f17 is _vc_factory else _vc_f17)
    _vc_put(_vc_self, "_vc_f18", _vc_make_18() if _vc_f18 is _vc_factory else _vc_f18)
    _vc_put(_vc_self, "_vc_f19", _vc_make_19() if _vc_f19 is _vc_factory else _vc_f19)
    _vc_put(_vc_self, "_vc_f20", _vc_make_20() if _vc_f20 is _vc_factory else _vc_f20)
    _vc_put(_vc_self, "_vc_f21", _vc_make_21() if _vc_f21 is _vc_factory else _vc_f21)


def frozen_ppppppppppppppppppppppppppppppppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
    _vc_f17: Any,
    _vc_f18: Any,
    _vc_f19: Any,
    _vc_f20: Any,
    _vc_f21: Any,
    _vc_f22: Any,
    _vc_f23: Any,
    _vc_f24: Any,
    _vc_f25: Any,
    _vc_f26: Any,
    _vc_f27: Any,
    _vc_f28: Any,
    _vc_f29: Any,
    _vc_f30: Any,
    _vc_f31: Any,
    _vc_f32: Any,
    _vc_f33: Any,
    _vc_f34: Any,
    _vc_f35: Any,
    _vc_f36: Any,
    _vc_f37: Any,
    _vc_f38: Any,
    _vc_f39: Any,
    _vc_f40: Any,
    _vc_f41: Any,
    _vc_f42: Any,
    _vc_f43: Any,
    _vc_f44: Any,
    _vc_f45: Any,
    _vc_f46: Any,
) -> None:
    _vc_put(_vc_self, "_vc_f0", _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0)
    _vc_put(_vc_self, "_vc_f1", _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1)
    _vc_put(_vc_self, "_vc_f2", _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2)
    _vc_put(_vc_self, "_vc_f3", _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3)
    _vc_put(_vc_self, "_vc_f4", _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4)
    _vc_put(_vc_self, "_vc_f5", _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5)
    _vc_put(_vc_self, "_vc_f6", _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6)
    _vc_put(_vc_self, "_vc_f7", _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7)
    _vc_put(_vc_self, "_vc_f8", _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8)
    _vc_put(_vc_self, "_vc_f9", _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9)
    _vc_put(_vc_self, "_vc_f10", _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10)
    _vc_put(_vc_self, "_vc_f11", _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11)
    _vc_put(_vc_self, "_vc_f12", _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12)
    _vc_put(_vc_self, "_vc_f13", _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13)
    _vc_put(_vc_self, "_vc_f14", _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14)
    _vc_put(_vc_self, "_vc_f15", _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15)
    _vc_put(_vc_self, "_vc_f16", _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16)
    _vc_put(_vc_self, "_vc_f17", _vc_make_17() if _vc_f17 is _vc_factory else _vc_f17)
    _vc_put(_vc_self, "_vc_f18", _vc_make_18() if _vc_f18 is _vc_factory else _vc_f18)
    _vc_put(_vc_self, "_vc_f19", _vc_make_19() if _vc_f19 is _vc_factory else _vc_f19)
    _vc_put(_vc_self, "_vc_f20", _vc_make_20() if _vc_f20 is _vc_factory else _vc_f20)
    _vc_put(_vc_self, "_vc_f21", _vc_make_21() if _vc_f21 is _vc_factory else _vc_f21)
    _vc_put(_vc_self, "_vc_f22", _vc_make_22() if _vc_f22 is _vc_factory else _vc_f22)
    _vc_put(_vc_self, "_vc_f23", _vc_make_23() if _vc_f23 is _vc_factory else _vc_f23)
    _vc_put(_vc_self, "_vc_f24", _vc_make_24() if _vc_f24 is _vc_factory else _vc_f24)
    _vc_put(_vc_self, "_vc_f25", _vc_make_25() if _vc_f25 is _vc_factory else _vc_f25)
    _vc_put(_vc_self, "_vc_f26", _vc_make_26() if _vc_f26 is _vc_factory else _vc_f26)
    _vc_put(_vc_self, "_vc_f27", _vc_make_27() if _vc_f27 is _vc_factory else _vc_f27)
    _vc_put(_vc_self, "_vc_f28", _vc_make_28() if _vc_f28 is _vc_factory else _vc_f28)
    _vc_put(_vc_self, "_vc_f29", _vc_make_29() if _vc_f29 is _vc_factory else _vc_f29)
    _vc_put(_vc_self, "_vc_f30", _vc_make_30() if _vc_f30 is _vc_factory else _vc_f30)
    _vc_put(_vc_self, "_vc_f31", _vc_make_31() if _vc_f31 is _vc_factory else _vc_f31)
    _vc_put(_vc_self, "_vc_f32", _vc_make_32() if _vc_f32 is _vc_factory else _vc_f32)
    _vc_put(_vc_self, "_vc_f33", _vc_make_33() if _vc_f33 is _vc_factory else _vc_f33)
    _vc_put(_vc_self, "_vc_f34", _vc_make_34() if _vc_f34 is _vc_factory else _vc_f34)
    _vc_put(_vc_self, "_vc_f35", _vc_make_35() if _vc_f35 is _vc_factory else _vc_f35)
    _vc_put(_vc_self, "_vc_f36", _vc_make_36() if _vc_f36 is _vc_factory else _vc_f36)
    _vc_put(_vc_self, "_vc_f37", _vc_make_37() if _vc_f37 is _vc_factory else _vc_f37)
    _vc_put(_vc_self, "_vc_f38", _vc_make_38() if _vc_f38 is _vc_factory else _vc_f38)
    _vc_put(_vc_self, "_vc_f39", _vc_make_39() if _vc_f39 is _vc_factory else _vc_f39)
    _vc_put(_vc_self, "_vc_f40", _vc_make_40() if _vc_f40 is _vc_factory else _vc_f40)
    _vc_put(_vc_self, "_vc_f41", _vc_make_41() if _vc_f41 is _vc_factory else _vc_f41)
    _vc_put(_vc_self, "_vc_f42", _vc_make_42() if _vc_f42 is _vc_factory else _vc_f42)
    _vc_put(_vc_self, "_vc_f43", _vc_make_43() if _vc_f43 is _vc_factory else _vc_f43)
    _vc_put(_vc_self, "_vc_f44", _vc_make_44() if _vc_f44 is _vc_factory else _vc_f44)
    _vc_put(_vc_self, "_vc_f45", _vc_make_45() if _vc_f45 is _vc_factory else _vc_f45)
    _vc_put(_vc_self, "_vc_f46", _vc_make_46() if _vc_f46 is _vc_factory else _vc_f46)


def mutable_p(
    _vc_self: Any,
    _vc_f0: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0


def mutable_pp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1


def mutable_ppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2


def mutable_pppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3


def mutable_ppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4


def mutable_ppppp_post_init(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self.__post_init__()


def mutable_pppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5


def mutable_ppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6


def mutable_pppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7


def mutable_ppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8


def mutable_ppppppppp_post_init(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8
    _vc_self.__post_init__()


def mutable_pppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8
    _vc_self._vc_f9 = _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9
    _vc_self._vc_f10 = _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10
    _vc_self._vc_f11 = _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11


def mutable_ppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8
    _vc_self._vc_f9 = _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9
    _vc_self._vc_f10 = _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10
    _vc_self._vc_f11 = _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11
    _vc_self._vc_f12 = _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12


def mutable_ppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8
    _vc_self._vc_f9 = _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9
    _vc_self._vc_f10 = _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10
    _vc_self._vc_f11 = _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11
    _vc_self._vc_f12 = _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12
    _vc_self._vc_f13 = _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13
    _vc_self._vc_f14 = _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14


def mutable_pppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8
    _vc_self._vc_f9 = _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9
    _vc_self._vc_f10 = _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10
    _vc_self._vc_f11 = _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11
    _vc_self._vc_f12 = _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12
    _vc_self._vc_f13 = _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13
    _vc_self._vc_f14 = _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14
    _vc_self._vc_f15 = _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15


def mutable_pppppppppppppppppppppppppppppppppppppppp(
    _vc_self: Any,
    _vc_f0: Any,
    _vc_f1: Any,
    _vc_f2: Any,
    _vc_f3: Any,
    _vc_f4: Any,
    _vc_f5: Any,
    _vc_f6: Any,
    _vc_f7: Any,
    _vc_f8: Any,
    _vc_f9: Any,
    _vc_f10: Any,
    _vc_f11: Any,
    _vc_f12: Any,
    _vc_f13: Any,
    _vc_f14: Any,
    _vc_f15: Any,
    _vc_f16: Any,
    _vc_f17: Any,
    _vc_f18: Any,
    _vc_f19: Any,
    _vc_f20: Any,
    _vc_f21: Any,
    _vc_f22: Any,
    _vc_f23: Any,
    _vc_f24: Any,
    _vc_f25: Any,
    _vc_f26: Any,
    _vc_f27: Any,
    _vc_f28: Any,
    _vc_f29: Any,
    _vc_f30: Any,
    _vc_f31: Any,
    _vc_f32: Any,
    _vc_f33: Any,
    _vc_f34: Any,
    _vc_f35: Any,
    _vc_f36: Any,
    _vc_f37: Any,
    _vc_f38: Any,
    _vc_f39: Any,
) -> None:
    _vc_self._vc_f0 = _vc_make_0() if _vc_f0 is _vc_factory else _vc_f0
    _vc_self._vc_f1 = _vc_make_1() if _vc_f1 is _vc_factory else _vc_f1
    _vc_self._vc_f2 = _vc_make_2() if _vc_f2 is _vc_factory else _vc_f2
    _vc_self._vc_f3 = _vc_make_3() if _vc_f3 is _vc_factory else _vc_f3
    _vc_self._vc_f4 = _vc_make_4() if _vc_f4 is _vc_factory else _vc_f4
    _vc_self._vc_f5 = _vc_make_5() if _vc_f5 is _vc_factory else _vc_f5
    _vc_self._vc_f6 = _vc_make_6() if _vc_f6 is _vc_factory else _vc_f6
    _vc_self._vc_f7 = _vc_make_7() if _vc_f7 is _vc_factory else _vc_f7
    _vc_self._vc_f8 = _vc_make_8() if _vc_f8 is _vc_factory else _vc_f8
    _vc_self._vc_f9 = _vc_make_9() if _vc_f9 is _vc_factory else _vc_f9
    _vc_self._vc_f10 = _vc_make_10() if _vc_f10 is _vc_factory else _vc_f10
    _vc_self._vc_f11 = _vc_make_11() if _vc_f11 is _vc_factory else _vc_f11
    _vc_self._vc_f12 = _vc_make_12() if _vc_f12 is _vc_factory else _vc_f12
    _vc_self._vc_f13 = _vc_make_13() if _vc_f13 is _vc_factory else _vc_f13
    _vc_self._vc_f14 = _vc_make_14() if _vc_f14 is _vc_factory else _vc_f14
    _vc_self._vc_f15 = _vc_make_15() if _vc_f15 is _vc_factory else _vc_f15
    _vc_self._vc_f16 = _vc_make_16() if _vc_f16 is _vc_factory else _vc_f16
    _vc_self._vc_f17 = _vc_make_17() if _vc_f17 is _vc_factory else _vc_f17
    _vc_self._vc_f18 = _vc_make_18() if _vc_f18 is _vc_factory else _vc_f18
    _vc_self._vc_f19 = _vc_make_19() if _vc_f19 is _vc_factory else _vc_f19
    _vc_self._vc_f20 = _vc_make_20() if _vc_f20 is _vc_factory else _vc_f20
    _vc_self._vc_f21 = _vc_make_21() if _vc_f21 is _vc_factory else _vc_f21
    _vc_self._vc_f22 = _vc_make_22() if _vc_f22 is _vc_factory else _vc_f22
    _vc_self._vc_f23 = _vc_make_23() if _vc_f23 is _vc_factory else _vc_f23
    _vc_self._vc_f24 = _vc_make_24() if _vc_f24 is _vc_factory else _vc_f24
    _vc_self._vc_f25 = _vc_make_25() if _vc_f25 is _vc_factory else _vc_f25
    _vc_self._vc_f26 = _vc_make_26() if _vc_f26 is _vc_factory else _vc_f26
    _vc_self._vc_f27 = _vc_make_27() if _vc_f27 is _vc_factory else _vc_f27
    _vc_self._vc_f28 = _vc_make_28() if _vc_f28 is _vc_factory else _vc_f28
    _vc_self._vc_f29 = _vc_make_29() if _vc_f29 is _vc_factory else _vc_f29
    _vc_self._vc_f30 = _vc_make_30() if _vc_f30 is _vc_factory else _vc_f30
    _vc_self._vc_f31 = _vc_make_31() if _vc_f31 is _vc_factory else _vc_f31
    _vc_self._vc_f32 = _vc_make_32() if _vc_f32 is _vc_factory else _vc_f32
    _vc_self._vc_f33 = _vc_make_33() if _vc_f33 is _vc_factory else _vc_f33
    _vc_self._vc_f34 = _vc_make_34() if _vc_f34 is _vc_factory else _vc_f34
    _vc_self._vc_f35 = _vc_make_35() if _vc_f35 is _vc_factory else _vc_f35
    _vc_self._vc_f36 = _vc_make_36() if _vc_f36 is _vc_factory else _vc_f36
    _vc_self._vc_f37 = _vc_make_37() if _vc_f37 is _vc_factory else _vc_f37
    _vc_self._vc_f38 = _vc_make_38() if _vc_f38 is _vc_factory else _vc_f38
    _vc_self._vc_f39 = _vc_make_39() if _vc_f39 is _vc_factory else _vc_f39
