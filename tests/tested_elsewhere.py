"""The modules whose tests are not at their mirrored path
(tests/unit/<path>/test_<module>.py or tests/processes/<path>/...), and why:
each reason names at least one test that covers the module, as
`tests/<file>.py::test_<name>`, and tests/unit/test_architecture.py checks
that every test named exists and holds every other module to a mirrored
file."""

E2E = "run whole under tests/e2e/: "
DOCS = "tests/unit/test_docs.py::test_a_shown_command_parses"
BENCH = f"a benchmark, run by hand (DEVELOPERS.md); {DOCS} parses its flags"
BENCH_PART = f"part of a benchmark run by hand (DEVELOPERS.md); {DOCS} imports it with its command"
CONVERT = "tests/unit/commands/tfrecords/test_convert_cmd.py::"
RUNS = "tests/unit/commands/kubeflow/test_runs.py::"
FOLDERS = "tests/unit/store/retention/test_folders.py::"
SLICES = "tests/integration/components/evaluator/test_gate_slices.py::"
E2E_RUN = "tests/e2e/test_e2e.py::"
RETRAINING = "tests/e2e/test_retraining.py::"
FORMAT = "tests/unit/dataset/records/test_format.py::"
STARTUP = "tests/processes/runtime/test_startup.py::"
TRAINJOB = "tests/unit/trainer/jobs/test_trainjob.py::"
WORKERS = "tests/e2e/test_train_workers.py::"
SPEC = "tests/unit/kubeflow/compile/test_spec.py::test_report_retention_and_the_notice_are_each_added_the_one_way"

TESTED_ELSEWHERE = {
    'kubeflow/steps/retention.py': f'the step, run on run folders: {FOLDERS}test_the_command_lists_then_deletes_and_refuses_a_spec_without_the_epoch',
    'store/retention/cache_epoch.py': f'{FOLDERS}test_a_run_starting_while_the_epoch_rises_stops_the_deletion, tests/unit/kubeflow/steps/test_span_window.py::test_the_step_passes_the_cache_epoch_retention_raised_for_its_window',
    'commands/kubeflow/flags.py': f'through `kubeflow submit|schedule|runs`: {RUNS}test_a_span_pipeline_is_submitted_and_scheduled_with_the_flags_alone',
    'commands/retention/cli.py': E2E + f'on a real run, {RETRAINING}test_retention_dry_runs_by_default_listing_what_it_would_delete_and_the_bytes',
    'commands/tfrecords/main.py': f'the entry of every subcommand: {CONVERT}test_every_command_has_help',
    'commands/kubeflow/cli.py': f'the entry of every subcommand: {RUNS}test_submit_uploads_and_starts_one_run_with_runtime_parameters',
    'commands/run/flags.py': 'tests/unit/kubeflow/compile/test_compiler.py::test_both_runners_take_the_same_pipeline_flags, tests/unit/pipeline/test_pipeline.py::test_train_flags_set_training_config_fields',
    'components/ui_artifacts.py': f'{SLICES}test_the_confusion_matrix_is_the_run_pages_and_the_reports, tests/e2e/test_kubeflow_steps.py::test_the_run_page_gets_the_metrics_the_confusion_matrix_and_the_model_card',
    'components/evaluator/evaluation.py': f'{SLICES}test_a_slice_worse_than_served_refuses_and_names_itself',
    'components/evaluator/eval_config.py': f'{SLICES}test_each_value_and_each_bucket_is_a_slice_tfma_computes',
    'components/pusher/pusher.py': f'tests/unit/pipeline/test_pipeline.py::test_the_pusher_pushes_what_was_blessed_and_checked_into_the_serving_dir, {E2E_RUN}test_a_push_is_refused_when_another_run_pushed_after_the_judgement',
    'components/statistics/statistics.py': 'tests/unit/runtime/test_beam.py::test_a_data_components_pipeline_runs_without_trying_prism, tests/processes/runtime/test_beam.py::test_a_distributed_runner_gets_its_arguments_as_given',
    'components/import_examples/hash_split.py': 'tests/integration/components/import_examples/test_import_examples.py::test_hash_split_puts_each_record_where_tfxs_executor_puts_it',
    'dataset/check.py': 'tests/unit/dataset/test_declaration.py::test_records_that_do_not_match_fail_with_file_record_and_field',
    'dataset/training.py': 'tests/unit/pipeline/test_pipeline.py::test_invalid_training_config_names_the_field, tests/unit/components/tuner/test_trial.py::test_what_a_worker_process_is_handed_comes_back_whole',
    'dataset/thresholds.py': f'{SLICES}test_per_slice_overrides_loosen_one_value_or_one_feature, tests/unit/components/evaluator/test_gate.py::test_the_verdict_is_tfmas_unless_the_gate_decides',
    'dataset/types.py': 'tests/unit/dataset/test_declaration.py::test_declaration_survives_the_custom_config_round_trip',
    'dataset/tuning.py': 'tests/unit/dataset/test_declaration.py::test_a_search_may_pick_only_values_training_config_accepts, tests/unit/dataset/test_declaration.py::test_a_tuning_section_reads_back_from_the_pipelines_json',
    'dataset/convert/digits.py': 'the bundled digits, read by every run under tests/e2e/: tests/e2e/test_e2e.py::test_every_component_ran_and_the_model_was_blessed_and_pushed',
    'dataset/convert/images.py': f'{CONVERT}test_image_folder_keeps_encoded_bytes_and_labels_by_sorted_class',
    'dataset/convert/rows.py': f'{CONVERT}test_empty_cells_make_an_optional_feature_or_with_strict_name_the_row, and every test that writes records',
    'kubeflow/errors.py': 'tests/unit/kubeflow/compile/test_platform.py::test_a_name_kubeflow_refuses_is_a_compile_error',
    'kubeflow/api/client.py': f'{RUNS}test_unreachable_endpoint_is_one_line, {RUNS}test_rejected_token_is_one_line',
    'kubeflow/api/schedules.py': f'{RUNS}test_schedule_twice_with_one_name_updates_instead_of_duplicating, {RUNS}test_cron_normalize',
    'kubeflow/compile/vertex_places.py': (
        'tests/unit/kubeflow/compile/test_backend.py::test_what_vertex_cannot_take_is_one_line_at_compile_time, '
        + RUNS + 'test_a_vertex_run_given_a_place_its_steps_cannot_reach_is_refused_before_any_call'),
    'kubeflow/steps/records.py': f'{RUNS}test_runs_lists_state_and_what_each_finished_run_pushed, {STARTUP}test_a_compiled_step_leaves_kfps_compiler_and_client_unloaded',
    'kubeflow/steps/report.py': 'tests/unit/store/metadata/test_outcome.py::test_the_report_step_sees_the_cached_steps_the_records_lack',
    'kubeflow/compile/report_step.py': SPEC,
    'kubeflow/compile/retention_step.py': SPEC,
    'pipeline/config.py': 'each invalid field named: tests/unit/pipeline/test_pipeline.py::test_invalid_pipeline_config_names_the_field',
    'pipeline/inputs.py': f'{RETRAINING}test_a_window_of_one_finds_the_earlier_spans_statistics_in_ml_metadata, tests/unit/pipeline/test_pipeline.py::test_the_served_version_not_trained_by_this_run_is_the_baseline',
    'pipeline/cache_keys.py': 'tests/unit/pipeline/test_pipeline.py::test_an_edit_under_trainer_changes_only_the_trainers_code_key, tests/unit/kubeflow/steps/test_span_window.py::test_a_rerun_with_nothing_new_passes_the_same_values',
    'runtime/progress/steps.py': 'tests/unit/runtime/progress/test_console.py::test_in_a_log_a_long_component_shows_its_clock_and_a_short_one_does_not',
    'serving/history.py': 'tests/processes/commands/serving/test_cli.py::test_rollback_pushes_a_copy_of_the_earlier_version_as_the_newest',
    'store/metadata/serving_result.py': f'{E2E_RUN}test_a_model_over_its_latency_budget_is_not_pushed_and_the_run_says_why',
    'store/metadata/store.py': E2E + f'every local run writes it; {E2E_RUN}test_debug_commands_show_runs_artifacts_and_lineage reads it back, and tests/processes/commands/debug/test_cli.py::test_another_pipelines_metadata_is_an_error_not_an_empty_listing',
    'store/report/training.py': 'tests/integration/trainer/test_loop.py::test_each_training_loop_reaches_the_accuracy_threshold',
    'trainer/worker.py': 'each worker process: tests/processes/trainer/test_distribute.py::test_two_workers_train_the_same_weights_on_different_shards',
    'trainer/run.py': 'tests/integration/trainer/test_loop.py::test_each_training_loop_reaches_the_accuracy_threshold, tests/integration/trainer/test_export.py::test_regression_label_trains_a_linear_unit_and_serves_a_value',
    'trainer/input_sizing.py': 'tests/integration/trainer/test_input_pipeline.py::test_parsed_data_is_cached_only_when_it_fits_the_budget',
    'trainer/jobs/launch.py': E2E + f'the Trainer step launching its job on each engine, {WORKERS}test_a_preempted_worker_restarts_the_job_which_resumes_and_a_retried_step_reattaches',
    'trainer/jobs/watch.py': f'{TRAINJOB}test_a_suspended_job_is_said_once_with_its_reason',
    'components/served_score/score.py': 'tests/integration/components/served_score/test_served_score.py::test_the_served_model_is_scored_on_the_newest_span_and_recorded',
    'components/served_score/chart.py': 'tests/unit/components/served_score/test_served_score.py::test_the_chart_marks_a_push_and_a_rollback_and_draws_the_threshold',
    'pipeline/served.py': 'ServedScore before the gates: tests/unit/pipeline/test_data_components.py::test_with_spans_drift_is_judged_before_the_schemas_check, tests/processes/components/kserve_deploy/test_kserve_deploy.py::test_the_step_is_there_only_with_kserve_and_never_cached_on_kubeflow',
    'runtime/kube.py': f'the training launcher calls the cluster through it: {TRAINJOB}test_a_placed_trainjob_passes_the_trainer_webhook',
    'trainer/jobs/job.py': f'{WORKERS}test_a_job_that_fails_for_good_fails_the_step_naming_the_worker, {WORKERS}test_a_job_past_its_timeout_is_deleted_and_fails_the_step',
    'trainer/jobs/local.py': 'tests/processes/trainer/test_checkpoints.py::test_a_killed_training_resumes_from_its_checkpoint, tests/processes/trainer/test_distribute.py::test_two_workers_train_the_same_weights_on_different_shards',
    'local_runner.py': E2E + f'every local run, {E2E_RUN}test_every_component_ran_and_the_model_was_blessed_and_pushed; its flags with tests/unit/pipeline/test_pipeline.py::test_bad_train_flags_name_the_setting',
    'commands/debug/artifacts.py': f'on a real run: {E2E_RUN}test_debug_commands_show_runs_artifacts_and_lineage',
    'commands/debug/lineage.py': f'on a real run: {E2E_RUN}test_debug_commands_show_runs_artifacts_and_lineage',
    'commands/tfrecords/inspect_cmd.py': f'through `tfrecords inspect`: {FORMAT}test_inspect_counts_infers_spec_and_shows_images_as_size',
    'commands/tfrecords/verify_cmd.py': f'through `tfrecords verify`: {FORMAT}test_verify_names_file_and_offset_of_the_first_bad_record',
    'commands/tfrecords/schema_cmd.py': 'through `tfrecords schema`: tests/unit/dataset/test_schema.py::test_cli_writes_schema_and_never_overwrites_silently',
    'components/serving_check/check.py': 'the process it starts: tests/processes/components/serving_check/test_serving_check.py::test_a_model_that_serves_as_promised_passes_with_its_latency',
    'components/tuner/worker.py': E2E + 'the search\'s worker processes, tests/e2e/test_tuning.py::test_two_workers_run_four_trials_none_twice',
    'dataset/converted.py': f'the declaration convert writes: {CONVERT}test_csv_table_becomes_numeric_categorical_and_named_classes',
    'dataset/records/verify.py': f'{FORMAT}test_verify_finds_truncation_inside_gzip_and_passes_good_files',
    'dataset/records/image_bytes.py': f'{CONVERT}test_mixed_png_and_jpeg_keep_their_bytes_and_are_declared_auto, tests/unit/trainer/test_image_decoding.py::test_png_decodes_to_its_uint8_pixels_eagerly_and_inside_tf_data',
    'dataset/records/inspect.py': f'{FORMAT}test_inspect_counts_infers_spec_and_shows_images_as_size',
    'dataset/convert/errors.py': f'each bad input named: {CONVERT}test_bad_image_stops_with_path_or_is_skipped_and_reported',
    'dataset/convert/workers.py': f'{CONVERT}test_a_worker_that_dies_stops_convert_with_nothing_written',
    'dataset/convert/tables.py': f'{CONVERT}test_csv_table_becomes_numeric_categorical_and_named_classes, {CONVERT}test_parquet_with_image_paths_and_sequences',
    'dataset/convert/arrow.py': f'{CONVERT}test_parquet_with_image_paths_and_sequences',
    'dataset/convert/arrays.py': f'{CONVERT}test_arrays_are_stored_as_raw_bytes_with_shape_and_dtype_declared',
    'dataset/convert/writer.py': f'{CONVERT}test_shards_by_size_with_consistent_names_and_no_leftovers, {FORMAT}test_tensorflow_reads_back_every_record_bit_exact',
    'dataset/convert/shards.py': f'{CONVERT}test_shards_by_size_with_consistent_names_and_no_leftovers',
    'runtime/lazy_imports.py': f'what each entry point imports: {STARTUP}test_help_and_a_bad_flag_load_no_heavy_library',
    'runtime/process.py': f'the set-up every entry point makes: {STARTUP}test_start_makes_the_keras_choice_and_keeps_tensorflow_io_unloaded',
    'runtime/progress/training.py': 'the lines a training prints: tests/integration/trainer/test_loop.py::test_each_training_loop_reaches_the_accuracy_threshold',
    'store/retention/apply.py': E2E + f'retention of real runs, {RETRAINING}test_retention_deletes_what_only_older_runs_used_and_marks_it_deleted, tests/e2e/test_s3_runs.py::test_local_runner_runs_on_s3_and_retention_deletes_there',
    'store/report/__init__.py': E2E + f'the report of a real run, opened in a browser: {E2E_RUN}test_the_run_report_opens_in_a_real_browser_with_every_section',
    'store/report/images.py': E2E + f'the report of a real run, {E2E_RUN}test_the_run_report_opens_in_a_real_browser_with_every_section',
    'trainer/augment.py': 'tests/unit/trainer/test_model.py::test_augmentation_changes_training_passes_only',
    'trainer/curves.py': 'tests/integration/trainer/test_loop.py::test_each_training_loop_reaches_the_accuracy_threshold',
    'trainer/jobs/inputs.py': f'what the workers read: tests/unit/trainer/jobs/test_vertex.py::test_the_primary_and_the_other_workers_each_get_the_trainers_gpus_and_command, {WORKERS}test_each_worker_reads_its_own_files_and_together_all_of_them',
    'bench/image_check_bench.py': BENCH,
    'bench/rerun_bench.py': BENCH,
    'bench/tuner_bench.py': BENCH,
    'bench/refusal_bench.py': BENCH,
    'bench/input_pipelines.py': BENCH_PART,
    'bench/output.py': BENCH_PART,
    'bench/startup_bench.py': BENCH,
    'bench/declaration_bench.py': BENCH,
    'bench/transform_bench.py': BENCH,
    'bench/model_ceiling.py': BENCH,
    'bench/e2e_run.py': BENCH_PART + ', tests/e2e/test_e2e_bench.py::test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json',
    'bench/photos.py': BENCH_PART + ', tests/e2e/test_e2e_bench.py::test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json',
    'bench/workers_bench.py': BENCH,
    'bench/e2e_bench.py': BENCH + ', tests/e2e/test_e2e_bench.py::test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json',
    'bench/convert_bench.py': BENCH,
    'bench/input_data.py': BENCH_PART,
    'bench/input_bench.py': BENCH,
    'bench/stock/module.py': 'the stock pipeline\'s module: tests/e2e/test_e2e_bench.py::test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json',
    'bench/stock/photos_module.py': 'the stock pipeline\'s module on photos: tests/e2e/test_e2e_bench.py::test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json',
    'bench/stock/pipeline.py': 'the stock pipeline: tests/e2e/test_e2e_bench.py::test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json',
}
