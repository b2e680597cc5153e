import pytest

from waku_shadow.errors import TopologyError
from waku_shadow.render import topology


def test_every_node_dials_distinct_others():
    topo = topology.random_dials(200, 8, seed=1)
    for node, peers in enumerate(topo.dials):
        assert len(set(peers)) == 8
        assert node not in peers
    assert sum(topo.in_degrees()) == 200 * 8


def test_seeded():
    assert topology.random_dials(100, 5, 2) == topology.random_dials(100, 5, 2)
    assert topology.random_dials(100, 5, 2).dials != topology.random_dials(100, 5, 3).dials


def test_result_is_connected():
    topo = topology.random_dials(500, 2, seed=5)
    assert len(topology.components(500, topo.neighbours())) == 1


def test_partitioned_draw_is_redrawn_and_recorded():
    # With one dial each, 60 nodes are usually split; the first connected draw is used.
    seed = next(s for s in range(50) if len(topology.components(60, topology.draw(60, 1, s, 0).neighbours())) > 1)
    topo = topology.random_dials(60, 1, seed)
    assert topo.attempt > 0
    assert topo == topology.draw(60, 1, seed, topo.attempt)
    assert len(topology.components(60, topo.neighbours())) == 1


def test_impossible_topology_says_so(monkeypatch):
    monkeypatch.setattr(topology, "MAX_ATTEMPTS", 3)
    with pytest.raises(TopologyError, match="left the network partitioned.*raise network.peers_per_node"):
        topology.random_dials(3000, 1, seed=1)
    with pytest.raises(TopologyError, match="impossible with 5 nodes"):
        topology.random_dials(5, 5, seed=1)


def test_publishers_are_distinct_and_seeded():
    chosen = topology.choose_publishers("random", 1000, 10, 1)
    assert len(set(chosen)) == 10 and chosen == topology.choose_publishers("random", 1000, 10, 1)


def test_cascade_is_a_line_published_from_its_head():
    line = topology.build("cascade", 5, peers_per_node=1, seed=3)
    assert line.dials == ((1,), (2,), (3,), (4,), ())
    assert line.neighbours() == [{1}, {0, 2}, {1, 3}, {2, 4}, {3}]
    assert topology.choose_publishers("cascade", 5, 1, seed=3) == [0]
