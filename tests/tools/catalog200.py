"""A catalog of 200 tools (20 kinds of things × 10 actions), as a large service API would
register them, with the queries a model searches it with and the tool each should find."""
from __future__ import annotations

from scripted_kernel import ToolDef

THINGS = {
    "user": "a user account (login, email, roles)",
    "order": "a customer's order of products",
    "invoice": "a bill sent to a customer",
    "payment": "money received for an invoice",
    "shipment": "a parcel sent to a customer, with its tracking number",
    "product": "an item of the catalog, with its price",
    "inventory": "units of a product in stock in a warehouse",
    "ticket": "a support request from a customer",
    "event": "a meeting or appointment in a calendar",
    "email": "an email message in a mailbox",
    "file": "a document in cloud storage",
    "folder": "a directory of documents in cloud storage",
    "repository": "a git repository of source code",
    "issue": "a bug report or feature request in a repository",
    "pull_request": "proposed code changes to a repository, for review",
    "channel": "a chat room where a team talks",
    "message": "a chat message posted in a channel",
    "customer": "a company or person that buys from us",
    "subscription": "a recurring plan a customer pays for monthly",
    "refund": "money returned to a customer for a payment",
}
ACTIONS = {
    "get": ("Get one {t} by id: {d}.", {"id": {"type": "string"}}),
    "list": ("List {t}s, newest first, optionally filtered by status.", {"status": {"type": "string"}}),
    "create": ("Create a new {t}: {d}.", {"data": {"type": "object"}}),
    "update": ("Change fields of an existing {t}.", {"id": {"type": "string"}, "fields": {"type": "object"}}),
    "delete": ("Delete a {t} permanently.", {"id": {"type": "string"}}),
    "search": ("Full-text search over {t}s by keywords.", {"query": {"type": "string"}}),
    "archive": ("Archive a {t} so that it no longer shows in lists.", {"id": {"type": "string"}}),
    "export": ("Export {t}s as CSV for a date range.", {"since": {"type": "string"}}),
    "count": ("Count {t}s matching a filter.", {"status": {"type": "string"}}),
    "summarize": ("Summarize recent activity on {t}s as totals per day.", {"days": {"type": "integer"}}),
}


def catalog() -> list[ToolDef]:
    defs = []
    for thing, what in THINGS.items():
        for action, (text, props) in ACTIONS.items():
            label = thing.replace("_", " ")
            defs.append(ToolDef(f"{action}_{thing}", text.format(t=label, d=what),
                                {"type": "object", "properties": props}, tags=[thing], category=thing))
    return defs


# (query, the tool it should find): some share words with the tool, some only its meaning
QUERIES = [
    ("refund a payment", "create_refund"),
    ("tracking number of a shipment", "get_shipment"),
    ("count open tickets", "count_ticket"),
    ("post a chat message", "create_message"),
    ("units in stock", "get_inventory"),
    ("list bug reports", "list_issue"),
    ("delete a subscription", "delete_subscription"),
    ("pull requests to review", "list_pull_request"),
    ("export invoices to csv", "export_invoice"),
    ("search emails by keyword", "search_email"),
    ("archive a channel", "archive_channel"),
    ("daily totals of orders", "summarize_order"),
    # by meaning only: a lexical ranking is not expected to find these first
    ("track a parcel", "get_shipment"),
    ("how many open tickets", "count_ticket"),
    ("cancel monthly plan", "delete_subscription"),
    ("meeting in my calendar", "get_event"),
]
LEXICAL = 12        # the first LEXICAL queries share words with the tool they should find
