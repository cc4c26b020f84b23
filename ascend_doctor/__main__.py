from ascend_doctor.launch import run

if __name__ == "__main__":
    run()
