    .equ DEMO_TILES, 64
    .include "board_step.S"
