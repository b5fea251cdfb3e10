import numpy as np
import pytest

from polyvse.evaluate.retrieval import bidirectional_retrieval


def brute_force(scores, image_of_sentence, ks=(1, 5, 10)):
    """A loop that follows the definition literally: sort, find the first hit."""
    S, N = scores.shape
    t2i_ranks = []
    for s in range(S):
        order = sorted(range(N), key=lambda n: -scores[s, n])
        t2i_ranks.append(order.index(image_of_sentence[s]) + 1)
    i2t_ranks = []
    for n in range(N):
        order = sorted(range(S), key=lambda s: -scores[s, n])
        hits = [pos + 1 for pos, s in enumerate(order) if image_of_sentence[s] == n]
        i2t_ranks.append(hits[0] if hits else S + 1)
    t2i = {k: 100 * np.mean([r <= k for r in t2i_ranks]) for k in ks}
    i2t = {k: 100 * np.mean([r <= k for r in i2t_ranks]) for k in ks}
    return t2i, i2t, np.median(t2i_ranks), np.median(i2t_ranks)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force_on_random_scores(seed):
    rng = np.random.default_rng(seed)
    n_images, per_image = 37, 3
    labels = np.repeat(np.arange(n_images), per_image)
    labels = labels[rng.permutation(len(labels))][: len(labels) - 5]  # some images lose a caption
    scores = rng.normal(size=(len(labels), n_images)).astype(np.float32)
    scores[np.arange(len(labels)), labels] += rng.normal(1.0, 1.0, size=len(labels))  # make it non-trivial
    got = bidirectional_retrieval(scores, labels)
    t2i, i2t, medr_t2i, medr_i2t = brute_force(scores, labels)
    for k in (1, 5, 10):
        assert got.t2i[k] == pytest.approx(t2i[k])
        assert got.i2t[k] == pytest.approx(i2t[k])
    assert got.medr_t2i == medr_t2i and got.medr_i2t == medr_i2t
    assert got.mean_recall == pytest.approx(np.mean(list(t2i.values()) + list(i2t.values())))


def test_blocks_do_not_change_the_answer():
    from polyvse.evaluate.retrieval import image_to_sentence_ranks, sentence_to_image_ranks

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 50, size=200)
    scores = rng.normal(size=(200, 50))
    assert (sentence_to_image_ranks(scores, labels, block=7) == sentence_to_image_ranks(scores, labels)).all()
    assert (image_to_sentence_ranks(scores, labels, block=3) == image_to_sentence_ranks(scores, labels)).all()


def test_perfect_and_reversed_scores():
    labels = np.repeat(np.arange(20), 2)
    perfect = (labels[:, None] == np.arange(20)[None, :]).astype(np.float32)
    res = bidirectional_retrieval(perfect, labels)
    assert res.mean_recall == 100.0 and res.medr_t2i == 1 and res.medr_i2t == 1
    res = bidirectional_retrieval(-perfect, labels)
    assert res.t2i[10] == 0.0 and res.medr_t2i == 20


def test_ties_count_against_the_ground_truth():
    """A collapsed model (every score equal) must not look perfect."""
    labels = np.repeat(np.arange(30), 2)
    res = bidirectional_retrieval(np.zeros((60, 30), dtype=np.float32), labels)
    assert res.mean_recall == 0.0
    assert res.medr_t2i == 30 and res.medr_i2t == 59  # behind every other image / non-matching sentence


def test_hand_computed_ranks_under_ties():
    """rank = 1 + number of non-ground-truth candidates scoring >= the (best) ground truth."""
    from polyvse.evaluate.retrieval import image_to_sentence_ranks, pessimistic_ranks, sentence_to_image_ranks

    labels = np.array([0, 0, 1, 2])  # sentences 0 and 1 describe image 0
    scores = np.array(
        [
            [0.5, 0.5, 0.1],  # image 1 ties with the truth → 2
            [0.8, 0.2, 0.8],  # image 2 ties with the truth → 2
            [0.3, 0.3, 0.6],  # image 0 ties, image 2 is above → 3
            [0.1, 0.2, 0.6],
        ],  # → 1
        dtype=np.float32,
    )
    assert sentence_to_image_ranks(scores, labels).tolist() == [2, 2, 3, 1]
    # image 0: best truth 0.8 (sentence 1), nothing else at 0.8 → 1; image 1: truth 0.3,
    # sentence 0 (0.5) above → 2; image 2: truth 0.6, sentence 1 (0.8) above, sentence 2 ties → 3
    assert image_to_sentence_ranks(scores, labels).tolist() == [1, 2, 3]
    res = bidirectional_retrieval(scores, labels, ks=(1, 2, 3))
    assert res.t2i == {1: 25.0, 2: 75.0, 3: 100.0} and res.medr_t2i == 2.0
    assert res.i2t == pytest.approx({1: 100 / 3, 2: 200 / 3, 3: 100.0}) and res.medr_i2t == 2.0
    # the shared function: several truths per row, and a row without any (never a hit: C + 1)
    truth = np.array([[True, False, True], [False, False, False]])
    ranks = pessimistic_ranks(np.array([[0.2, 0.4, 0.4], [1.0, 1.0, 1.0]]), truth)
    assert ranks.tolist() == [2, 4]
    with pytest.raises(ValueError, match="ground-truth mask"):
        pessimistic_ranks(np.zeros((2, 3)), np.zeros((2, 2), dtype=bool))
