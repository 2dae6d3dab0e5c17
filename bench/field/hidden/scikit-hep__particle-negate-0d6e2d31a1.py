"""Hidden check: the total spin J of valid PDG ids (a quark, a vector meson, a spin-3/2 baryon,
a tensor meson) and None for an invalid one"""

from fractions import Fraction

from particle.pdgid import J, PDGID


def test_spin_of_valid_ids():
    assert J(PDGID(3)) == Fraction(1, 2)         # s quark
    assert J(PDGID(113)) == 1                     # rho(770)0
    assert J(PDGID(3334)) == Fraction(3, 2)       # Omega-
    assert J(PDGID(225)) == 2                     # f2(1270)
    assert J(PDGID(-2112)) == Fraction(1, 2)      # anti-neutron


def test_invalid_id_has_no_spin():
    assert J(PDGID(0)) is None
    assert J(PDGID(99999999999)) is None
