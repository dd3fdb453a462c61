// npu_mode_fn.vh: the FlexSA modes' core offsets (npu_flexsa header), for the units that time
// rows and weight writes against them; included inside a module after npu_defs.vh.
// A row injected in cycle t enters core k (row 0) in cycle t + 1 + S * mode_off(mode, k):
//   FW (0, 1, 1, 2), HSW (0, 1, 0, 1), VSW (0, 0, 1, 1), ISW (0, 0, 0, 0).
// mode_gap(from, to) = max over the cores of mode_off(from, k) - mode_off(to, k), at least 0:
// in units of S, how much sooner rows of mode `to` reach some core than rows of `from` injected
// in the same cycle (2 for FW -> ISW, 1 for FW -> HSW / VSW and HSW / VSW -> VSW / HSW / ISW,
// 0 otherwise).
function [1:0] mode_off(input [1:0] md, input integer core);
    case (md)
        MODE_FW:  mode_off = (core == 0) ? 2'd0 : (core == 3) ? 2'd2 : 2'd1;
        MODE_HSW: mode_off = (core == 1 || core == 3) ? 2'd1 : 2'd0;
        MODE_VSW: mode_off = (core >= 2) ? 2'd1 : 2'd0;
        default:  mode_off = 2'd0;
    endcase
endfunction
function [1:0] mode_gap(input [1:0] from, input [1:0] to);
    case (from)
        MODE_FW:  mode_gap = (to == MODE_ISW) ? 2'd2 : (to == MODE_FW) ? 2'd0 : 2'd1;
        MODE_HSW: mode_gap = (to == MODE_FW || to == MODE_HSW) ? 2'd0 : 2'd1;
        MODE_VSW: mode_gap = (to == MODE_FW || to == MODE_VSW) ? 2'd0 : 2'd1;
        default:  mode_gap = 2'd0;
    endcase
endfunction
