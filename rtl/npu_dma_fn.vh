// npu_dma_fn.vh: the byte-run arithmetic both DMA engines share (docs/memory.md "DMA runs and
// bursts"), included inside a module that defines LB = log2(bytes per beat).
// span: beats of the run of `bytes` (>= 1) bytes starting at byte `o` of a beat,
//       floor((o + bytes - 1) / B) + 1 (the run's first beat counted from 0);
// align: the beat address of a byte address.
function [31:0] span(input [LB-1:0] o, input [31:0] bytes);
    span = (({{(32-LB){1'b0}}, o} + bytes - 32'd1) >> LB) + 32'd1;
endfunction
function [31:0] align(input [31:0] a);
    align = a & ~{{(32-LB){1'b0}}, {LB{1'b1}}};
endfunction
