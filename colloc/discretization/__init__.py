"""discretization"""
