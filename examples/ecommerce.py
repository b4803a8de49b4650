"""The e-commerce demo: four tools, one script that orchestrates them.

    python examples/ecommerce.py                       # runs the demo script below
    python -m scripted_kernel prompt --tools examples/ecommerce.py:api
    python -m scripted_kernel run --tools examples/ecommerce.py:api -c 'get_user --id 1'
"""
from __future__ import annotations

from typing import Literal, Optional, TypedDict

from scripted_kernel import ScriptedTool, tool


class User(TypedDict):
    id: int
    name: str
    email: str
    tier: Literal["gold", "silver", "bronze"]


class Order(TypedDict):
    order_id: int
    sku: str
    qty: int
    total: float
    status: Literal["pending", "shipped"]


class Stock(TypedDict):
    sku: str
    in_stock: int


class Discount(TypedDict):
    code: str
    user_id: int
    percent: int
    reason: str


USERS = {
    1: {"id": 1, "name": "Alice", "email": "alice@example.com", "tier": "gold"},
    2: {"id": 2, "name": "Bob", "email": "bob@example.com", "tier": "silver"},
    3: {"id": 3, "name": "Carol", "email": "carol@example.com", "tier": "bronze"},
}
ORDERS = {
    1: [{"order_id": 101, "sku": "widget", "qty": 3, "total": 7.5, "status": "shipped"},
        {"order_id": 102, "sku": "gadget", "qty": 1, "total": 10.0, "status": "pending"}],
    2: [{"order_id": 201, "sku": "gizmo", "qty": 2, "total": 19.98, "status": "shipped"}],
    3: [],
}
INVENTORY = {"widget": 42, "gadget": 0, "gizmo": 7}


@tool(category="customers", tags=["users", "read"])
def get_user(id: int) -> User:
    """Fetch a customer by id.

    Args:
        id: The customer's numeric id.
    """
    if id not in USERS:
        raise LookupError(f"no user with id {id}")
    return USERS[id]


@tool(category="orders", tags=["orders", "read"])
def list_orders(user_id: int, status: Optional[Literal["pending", "shipped"]] = None) -> list[Order]:
    """List a customer's orders, newest last.

    Args:
        user_id: The customer whose orders to list.
        status: Only orders in this state.
    """
    orders = ORDERS.get(user_id, [])
    return [o for o in orders if status is None or o["status"] == status]


@tool(category="catalog", tags=["inventory", "read"])
def get_inventory(sku: str) -> Stock:
    """Units in stock for a product.

    Args:
        sku: The product's stock-keeping unit.
    """
    if sku not in INVENTORY:
        raise LookupError(f"unknown sku {sku!r}")
    return {"sku": sku, "in_stock": INVENTORY[sku]}


@tool(category="customers", tags=["write"])
def create_discount(user_id: int, percent: int, reason: str = "loyalty") -> Discount:
    """Create a discount code for a customer.

    Args:
        user_id: Who gets the discount.
        percent: Discount in percent (1-50).
        reason: Why the discount is given.
    """
    if not 1 <= percent <= 50:
        raise ValueError("percent must be between 1 and 50")
    return {"code": f"SAVE{percent}-{user_id}", "user_id": user_id, "percent": percent, "reason": reason}


api = (ScriptedTool.builder("ecommerce")
       .short_description("Customers, orders, inventory and discounts of a small shop.")
       .function(get_user).function(list_orders).function(get_inventory).function(create_discount)
       .build())

DEMO = r"""
# Gold customers with a shipped order get a discount; report stock of what they bought.
for id in 1 2 3; do
  user=$(get_user --id "$id") || continue
  tier=$(jq -r .tier <<< "$user")
  shipped=$(list_orders --user_id "$id" --status shipped | jq length)
  if [[ $tier == gold && $shipped -gt 0 ]]; then
    create_discount --user_id "$id" --percent 15 | jq -r '"\(.code) for \(.user_id)"'
  fi
  list_orders --user_id "$id" | jq -r '.[].sku' | while read -r sku; do
    get_inventory --sku "$sku" | jq -r '"  \(.sku): \(.in_stock) in stock"'
  done
done
"""

if __name__ == "__main__":
    result = api.execute(DEMO)
    print(result.stdout, end="")
    if result.stderr:
        print(result.stderr, end="")
    raise SystemExit(result.exit_code)
