"""``ascend-doctor fleet``: many nodes' check reports, the majority stack, and what differs.

``load`` reads check JSON files and bundles into NodeReports; ``compare`` finds the
majority stack and ranks the nodes that differ from it or fail checks.
"""
