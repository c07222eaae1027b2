# Attention heatmaps (eval --svg, --tokens; converter/report/svg.cc): the unit and
# end-to-end tests of svg_test.cc, and the CLI on the bundled coverage model
# with its vocabulary and token ids (models/coverage/vocab.txt, token_ids.npz).
add_executable(converter_svg_test svg_test.cc)
target_link_libraries(converter_svg_test PRIVATE edgeattn_converter_lib GTest::gtest_main)
target_compile_definitions(converter_svg_test PRIVATE EA_MODELS_DIR="${PROJECT_SOURCE_DIR}/models")
target_compile_options(converter_svg_test PRIVATE ${EA_WARNINGS})
gtest_discover_tests(converter_svg_test DISCOVERY_TIMEOUT 60)

set(ea_cov ${PROJECT_SOURCE_DIR}/models/coverage)
set(ea_svg_dir ${CMAKE_CURRENT_BINARY_DIR}/svg_fixtures)
file(WRITE ${ea_svg_dir}/vocab3.txt "0\n1\n2\n")
file(WRITE ${ea_svg_dir}/vocab_gap.txt "0\n1\n\n3\n")
string(ASCII 255 ea_byte_ff)
file(WRITE ${ea_svg_dir}/vocab_latin1.txt "0\n1\nx${ea_byte_ff}\n")
ea_cli_case(svg_convert_coverage 0 "" "" convert --weights ${ea_cov}/weights.safetensors --spec ${ea_cov}/spec.json
  --calib ${ea_cov}/calib.npz --dtype int8 -o @/svg_coverage_int8.eatn)
set_tests_properties(converter_cli_svg_convert_coverage PROPERTIES FIXTURES_SETUP converter_cli_svg)
ea_cli_case(svg_tokens 0 "wrote .*heat_cov.svg" "" eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz
  --repeat 1 --svg @/heat_cov.svg --svg-layer cov --tokens ${ea_cov}/vocab.txt --token-ids ${ea_cov}/token_ids.npz)
# Sample 0: keys 4 0 5 8 5 7 3 2 PAD PAD (8 valid), steps emit 4 0 5 8 5 7 3 2 EOS EOS EOS.
add_test(NAME converter_cli_svg_tokens_drawn
         COMMAND ${CMAKE_COMMAND} -DFILE=${EA_CLI_DIR}/heat_cov.svg
                 "-DREGEX=<title>cov, sample 0 \\(int8\\)</title>.*>query token</text>.*<title>q 10, k 9: masked key</title>.*text-anchor=\"end\" fill=\"#000\">EOS</text>.*text-anchor=\"middle\">PAD</text>.*Tokens: vocab.txt, ids from token_ids.npz."
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/file_regex.cmake)
set_tests_properties(converter_cli_svg_tokens_drawn PROPERTIES DEPENDS converter_cli_svg_tokens
                     FIXTURES_REQUIRED "converter_cli;converter_cli_svg")
# Bad token input: one line naming the file and what is wrong.
ea_cli_case(svg_tokens_without_svg 1 "--tokens labels the heatmap's axes: it needs --svg FILE" ""
  eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz --tokens ${ea_cov}/vocab.txt)
ea_cli_case(svg_token_ids_without_tokens 1 "--token-ids needs --tokens VOCAB.txt" ""
  eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz --svg @/heat_x.svg --token-ids ${ea_cov}/token_ids.npz)
ea_cli_case(svg_vocab_empty_line 1 "vocab_gap.txt: line 3 is empty" ""
  eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz --svg @/heat_x.svg --tokens ${ea_svg_dir}/vocab_gap.txt
  --token-ids ${ea_cov}/token_ids.npz)
ea_cli_case(svg_vocab_not_utf8 1 "vocab_latin1.txt: line 3 is not UTF-8 text" ""
  eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz --svg @/heat_x.svg --tokens ${ea_svg_dir}/vocab_latin1.txt
  --token-ids ${ea_cov}/token_ids.npz)
ea_cli_case(svg_id_outside_vocab 1 "token_ids.npz: key 'cov.query_ids': id 4 at sample 0, position 0 is outside the vocabulary \\(3 tokens in .*vocab3.txt\\)" ""
  eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz --svg @/heat_x.svg --svg-layer cov
  --tokens ${ea_svg_dir}/vocab3.txt --token-ids ${ea_cov}/token_ids.npz)
ea_cli_case(svg_no_ids_for_layer 1 "reference.npz: no token ids for layer 'cov' \\(--tokens\\): give 'cov.query_ids' \\[N, Lq\\] and/or 'cov.key_ids'" ""
  eval @/svg_coverage_int8.eatn --reference ${ea_cov}/reference.npz --svg @/heat_x.svg --svg-layer cov
  --tokens ${ea_cov}/vocab.txt)
set_tests_properties(converter_cli_svg_tokens converter_cli_svg_tokens_without_svg converter_cli_svg_token_ids_without_tokens
                     converter_cli_svg_vocab_empty_line converter_cli_svg_vocab_not_utf8 converter_cli_svg_id_outside_vocab converter_cli_svg_no_ids_for_layer
                     PROPERTIES FIXTURES_REQUIRED "converter_cli;converter_cli_svg")
