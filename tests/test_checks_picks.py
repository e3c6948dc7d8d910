"""Reading the option letter and the number out of real answer shapes (the rules are in
app/scoring/checks/picks.py)."""

import pytest

from app.scoring.checks.picks import pick_choice
from app.scoring.checks.picks import pick_number

CHOICES = [
    ("The answer is (B).", "B"),
    ("**B**", "B"),
    ("B", "B"),
    ("b", "B"),
    ("(C)", "C"),
    ("D.", "D"),
    ("  \n\nA\n", "A"),
    ("B) because the mitochondria is the powerhouse of the cell.", "B"),
    ("(C) 42, since 6 times 7 is 42.", "C"),
    ("**D**: it is the only prime.", "D"),
    ("A. Paris is the capital of France.", "A"),
    ("b) the second one", "B"),
    ("Answer: b", "B"),
    ("Answer: B", "B"),
    ("answer - C", "C"),
    ("The correct answer is C.", "C"),
    ("The correct option is (B) Paris.", "B"),
    ("Final answer: **D**", "D"),
    ("The final answer is [A].", "A"),
    ("The answer is option B.", "B"),
    ("The answer would be C because of the heat.", "C"),
    ("Let me think. The answer is A. Wait, no: the answer is C.", "C"),
    ("I choose B.", "B"),
    ("I would pick D here.", "D"),
    ("I'd go with A", "A"),
    ("I think it's C, not B", "C"),
    ("It's B, because the others are wrong.", "B"),
    ("It must be D.", "D"),
    ("Option B is correct.", "B"),
    ("B is the correct answer.", "B"),
    ("Options A and D are wrong; C is correct.", "C"),
    ("The answer is a bit tricky, but C.", "C"),
    ("Among the options, **C** stands out.", "C"),
    ("Looking at these, (B) fits best.", "B"),
    ("The best fit here is clearly E", "E"),
    ("A cat is not a dog, so the choice must be ... I pick B.", "B"),
    ("Answer: The capital of France is Paris.", None),
    ("I don't know.", None),
    ("", None),
    ("e.g. the first one", None),
    ("Both B and C look right to me.", None),
    ("A and B are both plausible", None),
    ("I think so.", None),
    ("The answer is I think C", "C"),
    ("Option B or option C, hard to say.", None),
]


@pytest.mark.parametrize("answer, picked", CHOICES)
def test_the_picked_option_is_read_out_of_the_answer(answer, picked):
    assert pick_choice(answer) == picked


NUMBERS = [
    ("42", 42),
    ("1,234.5", 1234.5),
    ("-3e2", -300),
    ("2.5E-3", 0.0025),
    ("about 42", 42),
    ("42%", 42),
    ("$1,000", 1000),
    ("-$5", -5),
    ("€3.50", 3.5),
    ("The result is 7.", 7),
    ("x = 3/4", 0.75),
    ("−7 degrees", -7),
    (".5", 0.5),
    ("0.1", 0.1),
    ("+12", 12),
    ("It weighs 5kg.", 5),
    ("The answer is 12, since 3 × 4 = 12.", 12),
    ("The answer is 12, since 3 times 4.", 12),
    ("Answer: 17", 17),
    ("answer = 256", 256),
    ("The final answer is approximately 3.14.", 3.14),
    ("So the total is 1,000,000 dollars.", 1_000_000),
    ("The solution: 8", 8),
    ("We get 6 * 7 = 42.", 42),
    ("6 times 7 makes **42** in all, not 41.", 42),
    ("First 3, then 4, so 5 in the end.", 5),
    ("The result is \\boxed{128}. Check: 2^7 = 128; 7 steps.", 128),
    ("$$\\boxed{-2.5}$$", -2.5),
    ("There are 3 apples and 4 pears, 7 fruits.", 7),
    ("In 2024 sales grew by 12%.", 12),
    ("The temperature fell to -40.", -40),
    ("H2O is water.", None),
    ("x3 is a name", None),
    ("no numbers here", None),
    ("", None),
    ("1/0", 1),
    ("v2 of the answer is 9", 9),
    # Worked answers: the result, not a figure of the working before or after it.
    ("3 × 4 = 12, plus 5 is 17. **17**", 17),
    ("3 × 4 = 12, plus 5 is 17.", 17),
    ("Step 1: 120/4 = 30 ... The answer is 30.", 30),
    ("**Step 1:** 120 / 4 = 30\n**Step 2:** 30 + 5 = 35\n\nSo she has 35 left.", 35),
    ("The count is **4! × 2 = 48** arrangements.", 48),
    ("The average speed is 80 km/h (180 km ÷ 2.25 h).", 80),
    ("80 km/h. 2 hours 15 minutes is 2.25 hours, and 180 ÷ 2.25 = 80.", 80),
    ("48. (Without the constraint it would be 120.)", 48),
    ("36, because 10% of 240 is 24 and 5% is 12.", 36),
    ("5 lamps are left unsold; the other 7 were sold.", 5),
    (
        "Multiples of 4 total 1200, of 6 total 816, of 12 total 432. So 1200 + 816 − 432 = 1584.",
        1584,
    ),
    ("1. 17 × 20 = 340\n2. 17 × 4 = 68\n3. 340 + 68 = 408", 408),
    ("17 × 24 = 408 (check: 408 / 24 = 17)", 408),
    ("6 times 7 is 42, not 41.", 42),
    ("Total: 1584 (1200 + 816 - 432)", 1584),
]


@pytest.mark.parametrize("answer, number", NUMBERS)
def test_the_number_given_is_read_out_of_the_answer(answer, number):
    got = pick_number(answer)
    assert got == (None if number is None else pytest.approx(number))
