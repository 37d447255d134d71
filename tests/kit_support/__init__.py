"""Support for the conformance kit's own tests (deliberately broken implementations)."""
