"""Background jobs of the memory layer (run by the Pixie scheduler, `novaberg.pixie`).

Each job is a plain async function taking what it needs explicitly (pool, redis, model,
clock, a model-slot opener) and returning a small dict for `hintergrund_log`; the
scheduler adapts them (`novaberg.pixie.jobs`).
"""
