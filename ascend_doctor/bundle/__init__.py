"""``ascend-doctor bundle``: one redacted archive to attach to a bug report.

``collect`` gathers (check JSON, compat verdict, triage of the newest logs, the raw files
and command outputs the checks read, the newest plog and device logs), ``redact`` masks
what identifies people, machines and credentials, ``summary`` writes the Markdown to
paste, ``archive`` writes the .tar.gz with its manifest first and reads bundles back.
"""
