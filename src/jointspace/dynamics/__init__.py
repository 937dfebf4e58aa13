"""Smooth dynamics: RNEA, CRBA, sparse LDLᵀ, ABA, M⁻¹, energies (see each module)."""
