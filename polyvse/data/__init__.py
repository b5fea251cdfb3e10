"""Dataset adapters: each turns a raw dataset into the canonical tables.

captions: image_id, split (train|val|test), lang, cap_idx, text, origin (human|mt)
images:   image_id, split, path
"""
