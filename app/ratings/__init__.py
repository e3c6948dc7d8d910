"""Human ratings, pairwise votes, the leaderboard and the judge check."""
