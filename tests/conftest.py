import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest

from waku_shadow.configuration import loader, schema
from waku_shadow.paper import compare
from waku_shadow.stack import shadow_options

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
OVERLAYS = CONFIGS / "overlays"
RECORDED = REPO / "tests" / "data"
# the nwaku release a study builds when it names none
DEFAULT_NWAKU_TAG = schema.with_defaults({}, schema.schema())["stack"]["nwaku"]["tag"]


def patches_missing_from(shadow) -> list[str]:
    """The shadow/patches/ whose options the Shadow binary ``shadow`` does not list in its --help."""
    options = subprocess.run([str(shadow), "--help"], capture_output=True, text=True, timeout=60).stdout
    return [patch for option, (_, patch) in shadow_options.PATCHED_SHADOW_OPTIONS.items()
            if f"--{option.replace('_', '-')}" not in options]


def drawn(figure: Path) -> bool:
    """Whether a figure file holds a drawing: a PNG that decodes to more than one colour, or an SVG
    document with paths beyond the background's."""
    if figure.suffix == ".png":
        from matplotlib import image

        return float(image.imread(figure).std()) > 0
    svg = "{http://www.w3.org/2000/svg}"
    root = ElementTree.parse(figure).getroot()
    return root.tag == f"{svg}svg" and len(list(root.iter(f"{svg}path"))) > 1


# tests/data/recorded.yaml's network, which the recorded runs' tests set beside the paper's data
RECORDED_NETWORK = compare.PaperNetwork(nodes=16, peers_per_node=4, latencies_ms=(100,), bandwidth_up_bps=38_000_000,
                                        bandwidth_down_bps=83_000_000, publishers=(3,))


@pytest.fixture
def recorded_stands_for_the_paper(monkeypatch):
    """The recorded runs' 16-node network stands in for the paper's 1000 nodes, so that their results
    are set beside the paper's data as a study of the paper's network is."""
    monkeypatch.setattr(compare, "PAPER_NETWORK", RECORDED_NETWORK)


@pytest.fixture
def small_study():
    """A 12-node study resolved from a config mapping, as the workflow resolves one."""
    return loader.resolve(
        {
            "study": "unit",
            "seed": 7,
            "network": {"nodes": 12, "peers_per_node": 3, "latency": "50 ms"},
            "traffic": {"publishers": 3, "messages_per_publisher": 2, "message_sizes": ["2 KB", "25 KB"]},
        }
    )
