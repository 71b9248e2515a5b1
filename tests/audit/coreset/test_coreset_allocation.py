"""Budget rule and allocation, including the released AMLworld HI-Small design."""

import numpy as np
import pytest

from audit.coreset.allocation import allocate, largest_remainder, negative_budget


def test_amlworld_hi_small_budget_reproduced_from_published_sizes():
    n_pos = 1_251
    budget = negative_budget(n_pos, 2.0)
    assert budget == 2_502
    sample = allocate([363, 334_638, 344_779, 334_638], budget, 0.3)
    assert sample.tolist() == [363, 713, 713, 713]
    assert n_pos + sample.sum() == 3_753  # released coreset size


def test_hard_population_larger_than_reserve_is_sampled_not_censused():
    sample = allocate([5_000, 100_000, 100_000, 100_000], 2_000, 0.3)
    assert sample[0] == 600  # floor(0.3 * 2000)
    assert 0 < sample[0] / 5_000 < 1
    assert sample.sum() == 2_000


def test_residual_goes_to_spare_capacity_by_largest_remainder():
    # per stratum 30 // 3 = 10, capped at 3 in the middle stratum: residual 7 all to the only spare
    assert allocate([0, 10, 3, 100], 30, None).tolist() == [0, 10, 3, 17]
    # spare 5/5/5, residual 2: equal remainders, earlier strata win the tie
    assert largest_remainder(2, np.array([5, 5, 5])).tolist() == [1, 1, 0]
    # proportional: 7 * [1, 2, 4] / 7 = [1, 2, 4] exactly
    assert largest_remainder(7, np.array([1, 2, 4])).tolist() == [1, 2, 4]
    # 5 * [3, 3, 1] / 7 = [2.14, 2.14, 0.71]: floors [2, 2, 0], leftover 1 to the largest remainder
    assert largest_remainder(5, np.array([3, 3, 1])).tolist() == [2, 2, 1]


def test_uniform_and_difficulty_designs():
    assert allocate([0, 999], 100, None).tolist() == [0, 100]
    sample = allocate([0, 40, 40, 41], 100, None)
    assert sample.sum() == 100 and np.all(sample <= [0, 40, 40, 41])


def test_budget_that_cannot_reach_every_nonempty_stratum_is_rejected():
    with pytest.raises(
        ValueError, match="allocation: a budget of 2 rows cannot give each of the 4 non-empty.*positive allocation"
    ):
        allocate([10, 10, 10, 10], 2, 0.3)


def test_budget_larger_than_negatives_is_rejected():
    with pytest.raises(ValueError, match="larger than the 30 negatives"):
        allocate([0, 10, 10, 10], 31, None)


def test_design_without_hard_stratum_must_not_have_hard_rows():
    with pytest.raises(ValueError, match="N_hard = 0"):
        allocate([3, 10], 5, None)
