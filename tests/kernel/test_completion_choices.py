"""Tab after a tool's flag offers the values its schema lists."""
import sys
from pathlib import Path

from scripted_kernel.kernel import complete_script

def test_tab_offers_a_flags_choices():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    try:
        import ecommerce
    finally:
        sys.path.pop(0)

    def offers(text):
        return [c for c, _ in complete_script(text, len(text), ecommerce.api, (None, "/"))[1]]
    assert offers("list_orders --user_id 1 --status ") == ["pending", "shipped"]
    assert offers("list_orders --user_id 1 --status s") == ["shipped"]
    assert offers("list_orders --status=p") == ["--status=pending"]
    assert offers("get_user --id ") == []

