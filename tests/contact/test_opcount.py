"""Operation counts of the Delassus methods against the numbers printed in seed 000 (§3.2.4, L1757, L1808)."""
from engine.contact.opcount import chang_khatib_ops, cheapest_method, initial_method_ops, thesis_method_ops

# HRP-2 standing (seed 000 L1757): C = 2 feet, m = 8 points, s = 2 × 6, β_m = 8 × 6, α_C = 12, β_C = 6 + 6
HRP2 = dict(m=8, s=12, C=2, beta_m=48, alpha_C=12, beta_C=12)


def test_initial_method_hrp2_standing():
    ops = initial_method_ops(HRP2["m"], HRP2["s"], HRP2["beta_m"])
    assert (ops.muldiv, ops.addsub, ops.total) == (7596, 6228, 13824)


def test_chang_khatib_hrp2_standing():
    ops = chang_khatib_ops(HRP2["m"], HRP2["s"], HRP2["C"], HRP2["alpha_C"])
    assert (ops.muldiv, ops.addsub, ops.total) == (4822, 5011, 9833)


def test_thesis_method_hrp2_standing():
    ops = thesis_method_ops(HRP2["m"], HRP2["s"], HRP2["C"], HRP2["beta_C"])
    assert (ops.muldiv, ops.addsub, ops.total) == (5076, 4428, 9504)


def test_cheapest_is_the_thesis_method_when_the_contacts_meet_at_the_base():
    assert cheapest_method(**HRP2) == "thesis"


def test_same_branch_case_favours_chang_khatib():
    # right hand + forearm (seed 000 L1808): Chang–Khatib 6323, new method 7590 operations. The thesis gives no
    # parameters; m = 8, C = 2, s = 6, α_C = 1, β_C = 11 is the only small-integer set giving both totals.
    case = dict(m=8, s=6, C=2, alpha_C=1, beta_C=11)
    assert chang_khatib_ops(case["m"], case["s"], case["C"], case["alpha_C"]).total == 6323
    assert thesis_method_ops(case["m"], case["s"], case["C"], case["beta_C"]).total == 7590
    assert cheapest_method(beta_m=8 * 6, **case) == "chang-khatib"
