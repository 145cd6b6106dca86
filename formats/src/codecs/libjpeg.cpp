// libjpeg's error handling is a longjmp out of the library. Each function that calls into
// libjpeg sets its own jump point and holds no C++ object that needs destroying, so a jump
// skips no destructor; the C++ caller then turns the recorded message into a FormatError.
#include "libjpeg.hpp"

#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <string>

#include <jpeglib.h>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::formats::detail {

namespace {

struct ErrorManager {
  jpeg_error_mgr base;  // first: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  int warnings;
};

ErrorManager& manager_of(j_common_ptr cinfo) {
  return *reinterpret_cast<ErrorManager*>(cinfo->err);
}

void error_exit(j_common_ptr cinfo) {
  ErrorManager& error = manager_of(cinfo);
  (*cinfo->err->format_message)(cinfo, error.message);
  std::longjmp(error.jump, 1);
}

// Warnings (level -1) are counted and the first is kept, as TurboJPEG does; traces dropped.
void emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  ErrorManager& error = manager_of(cinfo);
  if (error.warnings++ == 0) (*cinfo->err->format_message)(cinfo, error.message);
}

enum class Step { done, failed, wrong_size };

// Header, scale, start, the column crop and the skip to the first row wanted.
Step start(jpeg_decompress_struct& cinfo, ErrorManager& error, const std::uint8_t* data,
           std::size_t size, ScalingFactor scale, J_COLOR_SPACE colorspace, std::uint32_t width,
           std::uint32_t height, JDIMENSION* x, JDIMENSION* columns, JDIMENSION first_row) {
  if (setjmp(error.jump) != 0) return Step::failed;
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.scale_num = static_cast<unsigned int>(scale.num);
  cinfo.scale_denom = static_cast<unsigned int>(scale.denom);
  cinfo.out_color_space = colorspace;
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_width != width || cinfo.output_height != height) return Step::wrong_size;
  if (*columns < cinfo.output_width) jpeg_crop_scanline(&cinfo, x, columns);
  if (first_row > 0 && jpeg_skip_scanlines(&cinfo, first_row) != first_row) return Step::failed;
  return Step::done;
}

// The rows wanted, then the rest and the end of the image. The rest is skipped but for its
// last row, which is read into `spare`: skipping to the very end would declare the end of the
// image reached without entropy-decoding the rows, and damage there would go unnoticed.
Step finish(jpeg_decompress_struct& cinfo, ErrorManager& error, JSAMPARRAY rows, JDIMENSION count,
            JSAMPROW spare) {
  if (setjmp(error.jump) != 0) return Step::failed;
  for (JDIMENSION done = 0; done < count;) {
    const JDIMENSION read = jpeg_read_scanlines(&cinfo, rows + done, count - done);
    if (read == 0) return Step::failed;
    done += read;
  }
  if (cinfo.output_scanline < cinfo.output_height) {
    const JDIMENSION rest = cinfo.output_height - cinfo.output_scanline;
    if (rest > 1) jpeg_skip_scanlines(&cinfo, rest - 1);
    if (jpeg_read_scanlines(&cinfo, &spare, 1) != 1) return Step::failed;
  }
  jpeg_finish_decompress(&cinfo);
  return Step::done;
}

bool create(jpeg_decompress_struct& cinfo, ErrorManager& error) {
  if (setjmp(error.jump) != 0) return false;
  jpeg_create_decompress(&cinfo);
  return true;
}

}  // namespace

struct LibjpegDecompressor::State {
  jpeg_decompress_struct cinfo{};
  ErrorManager error{};
};

LibjpegDecompressor::LibjpegDecompressor() : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.cinfo.err = jpeg_std_error(&s.error.base);
  s.error.base.error_exit = error_exit;
  s.error.base.emit_message = emit_message;
  if (!create(s.cinfo, s.error)) {
    throw FormatError(std::string("cannot create a libjpeg decompressor: ") + s.error.message +
                      "; the process may be out of memory");
  }
}

LibjpegDecompressor::~LibjpegDecompressor() {
  jpeg_destroy_decompress(&state_->cinfo);
}

DecodedPart LibjpegDecompressor::decode(std::span<const std::uint8_t> bytes, ScalingFactor scale,
                                        std::uint32_t width, std::uint32_t height, bool cmyk,
                                        const PixelRect& rect, std::vector<std::uint8_t>& out,
                                        const TjCall& call) {
  State& s = *state_;
  s.error.warnings = 0;
  s.error.message[0] = '\0';
  JDIMENSION x = rect.x;
  JDIMENSION columns = rect.width;
  const std::uint32_t components = cmyk ? 4 : 3;
  Step step = start(s.cinfo, s.error, bytes.data(), bytes.size(), scale, cmyk ? JCS_CMYK : JCS_RGB,
                    width, height, &x, &columns, rect.y);
  if (step == Step::done) {
    const std::size_t stride = std::size_t{columns} * components;
    const std::size_t size = stride * (rect.height + 1);  // + the spare row
    if (out.size() < size) out.resize(size);
    rows_.resize(rect.height);
    for (std::uint32_t y = 0; y < rect.height; ++y) rows_[y] = out.data() + y * stride;
    step = finish(s.cinfo, s.error, rows_.data(), rect.height, out.data() + rect.height * stride);
  }
  if (step != Step::done) {
    jpeg_abort_decompress(&s.cinfo);
    const std::string reason =
        step == Step::wrong_size
            ? "it decodes to another size than its header declares"
            : std::string(s.error.message[0] != '\0' ? s.error.message : "the decoder stopped");
    on_decode_failure(reason, false, call);
  }
  if (s.error.warnings > 0) on_decode_failure(s.error.message, true, call);
  return {x, rect.y, columns, rect.height, components};
}

}  // namespace gpufeed::formats::detail
