// Anchor for the shared torch precompiled header.
