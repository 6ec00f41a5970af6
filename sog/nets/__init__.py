"""The counterfactual value-and-policy network (CVPN): the next issue builds it here."""
