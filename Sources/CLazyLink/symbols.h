/*
 * The functions Vitrine calls in the libraries it loads when first needed, one line each: X(library, name). The
 * stubs (stubs.S) and the loader (lazy_link.c) are both made from this list, so a function used from Swift or a
 * shim but missing here fails the link with an undefined symbol, never at run time.
 */
#ifndef VITRINE_LAZY_LINK_SYMBOLS_H
#define VITRINE_LAZY_LINK_SYMBOLS_H

#define VITRINE_LAZY_SYMBOLS(X) \
    X(VITRINE_LAZY_HEIF, heif_context_alloc) \
    X(VITRINE_LAZY_HEIF, heif_context_free) \
    X(VITRINE_LAZY_HEIF, heif_context_get_image_handle) \
    X(VITRINE_LAZY_HEIF, heif_context_get_primary_image_ID) \
    X(VITRINE_LAZY_HEIF, heif_context_get_primary_image_handle) \
    X(VITRINE_LAZY_HEIF, heif_context_read_from_reader) \
    X(VITRINE_LAZY_HEIF, heif_context_set_maximum_image_size_limit) \
    X(VITRINE_LAZY_HEIF, heif_decode_image) \
    X(VITRINE_LAZY_HEIF, heif_decoding_options_alloc) \
    X(VITRINE_LAZY_HEIF, heif_decoding_options_free) \
    X(VITRINE_LAZY_HEIF, heif_have_decoder_for_format) \
    X(VITRINE_LAZY_HEIF, heif_image_get_height) \
    X(VITRINE_LAZY_HEIF, heif_image_get_plane_readonly) \
    X(VITRINE_LAZY_HEIF, heif_image_get_width) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_color_profile_type) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_height) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_list_of_metadata_block_IDs) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_luma_bits_per_pixel) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_metadata) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_metadata_size) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_nclx_color_profile) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_raw_color_profile) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_raw_color_profile_size) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_get_width) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_has_alpha_channel) \
    X(VITRINE_LAZY_HEIF, heif_image_handle_release) \
    X(VITRINE_LAZY_HEIF, heif_image_release) \
    X(VITRINE_LAZY_HEIF, heif_nclx_color_profile_free) \
    X(VITRINE_LAZY_DAV1D, dav1d_close) \
    X(VITRINE_LAZY_DAV1D, dav1d_data_create) \
    X(VITRINE_LAZY_DAV1D, dav1d_data_unref) \
    X(VITRINE_LAZY_DAV1D, dav1d_default_settings) \
    X(VITRINE_LAZY_DAV1D, dav1d_get_picture) \
    X(VITRINE_LAZY_DAV1D, dav1d_open) \
    X(VITRINE_LAZY_DAV1D, dav1d_picture_unref) \
    X(VITRINE_LAZY_DAV1D, dav1d_send_data) \
    X(VITRINE_LAZY_INPUT, libinput_device_get_name) \
    X(VITRINE_LAZY_INPUT, libinput_dispatch) \
    X(VITRINE_LAZY_INPUT, libinput_event_destroy) \
    X(VITRINE_LAZY_INPUT, libinput_event_get_device) \
    X(VITRINE_LAZY_INPUT, libinput_event_get_keyboard_event) \
    X(VITRINE_LAZY_INPUT, libinput_event_get_pointer_event) \
    X(VITRINE_LAZY_INPUT, libinput_event_get_touch_event) \
    X(VITRINE_LAZY_INPUT, libinput_event_get_type) \
    X(VITRINE_LAZY_INPUT, libinput_event_keyboard_get_key) \
    X(VITRINE_LAZY_INPUT, libinput_event_keyboard_get_key_state) \
    X(VITRINE_LAZY_INPUT, libinput_event_pointer_get_absolute_x_transformed) \
    X(VITRINE_LAZY_INPUT, libinput_event_pointer_get_absolute_y_transformed) \
    X(VITRINE_LAZY_INPUT, libinput_event_pointer_get_button) \
    X(VITRINE_LAZY_INPUT, libinput_event_pointer_get_button_state) \
    X(VITRINE_LAZY_INPUT, libinput_event_pointer_get_dx) \
    X(VITRINE_LAZY_INPUT, libinput_event_pointer_get_dy) \
    X(VITRINE_LAZY_INPUT, libinput_event_touch_get_x_transformed) \
    X(VITRINE_LAZY_INPUT, libinput_event_touch_get_y_transformed) \
    X(VITRINE_LAZY_INPUT, libinput_get_event) \
    X(VITRINE_LAZY_INPUT, libinput_get_fd) \
    X(VITRINE_LAZY_INPUT, libinput_resume) \
    X(VITRINE_LAZY_INPUT, libinput_suspend) \
    X(VITRINE_LAZY_INPUT, libinput_udev_assign_seat) \
    X(VITRINE_LAZY_INPUT, libinput_udev_create_context) \
    X(VITRINE_LAZY_INPUT, libinput_unref) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_connack_string) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_connect_async) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_connect_bind_v5) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_connect_callback_set) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_destroy) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_disconnect) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_disconnect_callback_set) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_int_option) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_lib_init) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_loop_misc) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_loop_read) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_loop_write) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_message_callback_set) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_new) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_property_add_int32) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_property_free_all) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_publish) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_reason_string) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_socket) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_strerror) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_subscribe) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_tls_set) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_username_pw_set) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_want_write) \
    X(VITRINE_LAZY_MOSQUITTO, mosquitto_will_set) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_add_response_header) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_create_response_from_buffer) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_destroy_response) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_get_connection_values) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_get_daemon_info) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_get_timeout) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_lookup_connection_value) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_queue_response) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_resume_connection) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_run) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_start_daemon) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_stop_daemon) \
    X(VITRINE_LAZY_MICROHTTPD, MHD_suspend_connection) \
    X(VITRINE_LAZY_QRENCODE, QRcode_encodeString) \
    X(VITRINE_LAZY_QRENCODE, QRcode_free) \
    X(VITRINE_LAZY_FREETYPE, FT_Done_Face) \
    X(VITRINE_LAZY_FREETYPE, FT_Done_FreeType) \
    X(VITRINE_LAZY_FREETYPE, FT_Init_FreeType) \
    X(VITRINE_LAZY_FREETYPE, FT_Load_Char) \
    X(VITRINE_LAZY_FREETYPE, FT_New_Face) \
    X(VITRINE_LAZY_FREETYPE, FT_Set_Pixel_Sizes)

#endif
